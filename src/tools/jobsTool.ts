import { Clock, Effect, Layer, Schema } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { RunContext } from "../kernel/RunContext.js"
import { scopeCovers, scopeTag } from "../kernel/toolScope.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { Jobs, type JobsService } from "./Jobs.js"
import type { JobRow } from "./JobStore.js"
import { endDescription, formatDuration } from "./jobText.js"
import type { ToolMetadata } from "./toolMetadata.js"

const JobId = Schema.Int.pipe(Schema.positive()).annotations({ description: "The job's number (bash background returned it)" })

export const JobsArgs = Schema.Struct({
  action: Schema.Literal("list", "status", "output", "kill").annotations({
    description: "list: the latest jobs; status: one job; output: lines of its output (so far); kill: stop a running job"
  }),
  id: Schema.optional(JobId),
  offset: Schema.optionalWith(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)).annotations({ description: "output: first line, 1-indexed" }),
    { default: () => 1 }
  ),
  limit: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(1, 2000)).annotations({ description: "output: most lines (default 200)" }),
    { default: () => 200 }
  )
})
export type JobsArgs = typeof JobsArgs.Type

export const jobsTool: ToolMetadata = {
  toolId: "jobs",
  name: "Jobs",
  description: "Read and control background jobs (started with bash { command, background: true }): list them, a " +
    "job's status, its output (stdout and stderr together; so far while it runs), or kill one. A job's end also " +
    "comes back by itself as a new message.",
  safetyClass: "LOCAL_WRITE",
  idempotent: false,
  timeoutMs: 30_000,
  scope: "full"
}

const clock = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 19)

/** One line per job: `3 running 4m12s  sleep 600` (the age for a running job, the duration for an ended one). */
export const jobLine = (row: JobRow, nowMs: number, maxLifetimeMs: number): string => {
  const took = formatDuration((row.endedAtMs ?? nowMs) - row.startedAtMs)
  const command = row.command.length > 120 ? `${row.command.slice(0, 120)}…` : row.command
  return `${row.id}  ${endDescription(row, maxLifetimeMs)}  ${took}  started ${clock(row.startedAtMs)} UTC  ` +
    `[${row.conversation}]  ${command}`
}

const needId = (action: string) => toolFailure("VALIDATION_ERROR", `jobs { action: "${action}" } needs id, the job's number`)

const statusOf = (row: JobRow, nowMs: number, maxLifetimeMs: number) => ({
  id: row.id,
  state: row.state,
  command: row.command,
  conversation: row.conversation,
  startedAtMs: row.startedAtMs,
  endedAtMs: row.endedAtMs,
  exitCode: row.exitCode,
  outputBytes: row.outputBytes,
  droppedBytes: row.droppedBytes,
  artifactId: row.artifactId,
  text: jobLine(row, nowMs, maxLifetimeMs)
})

/** jobs({ action, id? }): a run sees and controls its own conversation's jobs; the operator's, all. */
export const jobsHandler = (jobs: JobsService, maxLifetimeMs: number) =>
  Effect.fn("kern.tools.jobs")(function*(args: JobsArgs) {
    const ctx = yield* RunContext
    const now = yield* Clock.currentTimeMillis
    switch (args.action) {
      case "list": {
        const rows = yield* jobs.list(ctx)
        return {
          jobs: rows.map((row) => statusOf(row, now, maxLifetimeMs)),
          text: rows.length === 0 ? "no background jobs" : rows.map((row) => jobLine(row, now, maxLifetimeMs)).join("\n")
        }
      }
      case "status": {
        if (args.id === undefined) return yield* needId(args.action)
        return statusOf(yield* jobs.get(args.id, ctx), now, maxLifetimeMs)
      }
      case "output": {
        if (args.id === undefined) return yield* needId(args.action)
        return yield* jobs.output(args.id, ctx, { offset: args.offset, limit: args.limit })
      }
      case "kill": {
        if (args.id === undefined) return yield* needId(args.action)
        return statusOf(yield* jobs.kill(args.id, ctx), yield* Clock.currentTimeMillis, maxLifetimeMs)
      }
    }
  })

/** Registers `jobs` where background jobs run (the running agent), under a config whose toolScope has bash. */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const { config } = yield* AgentConfig
  if (!scopeCovers(config.toolScope, jobsTool.scope)) return
  const registry = yield* ToolRegistry
  const jobs = yield* Jobs
  yield* registry.register({
    toolId: jobsTool.toolId,
    name: jobsTool.name,
    description: jobsTool.description,
    safetyClass: jobsTool.safetyClass,
    idempotent: jobsTool.idempotent,
    timeoutMs: jobsTool.timeoutMs,
    sideEffectLevel: "local_write",
    riskTags: [scopeTag(jobsTool.scope)]
  }, { parameters: JobsArgs, handler: jobsHandler(jobs, config.jobs.maxLifetimeMs) })
}))
