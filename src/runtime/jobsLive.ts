import { Clock, Deferred, Duration, Effect, Fiber, Layer, Option, Ref } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import { mainConversation } from "../kernel/Audience.js"
import type { RunContextData } from "../kernel/RunContext.js"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { privateDirMode } from "../storage/privateFiles.js"
import { ArtifactStore } from "../tools/ArtifactStore.js"
import { Followups, originOf, type WorkOrigin } from "../tools/Followups.js"
import { type JobProcess, fileTail, spawnJob } from "../tools/jobProcess.js"
import { type JobOutput, Jobs, type JobStart, visibleConversation } from "../tools/Jobs.js"
import { type JobEnd, type JobRow, JobStore } from "../tools/JobStore.js"
import { endReport } from "../tools/jobText.js"
import { killTagged, makeCallTag, reapTag } from "../tools/processTag.js"
import { numberLine, splitLines } from "../tools/textFile.js"

/** After the kill, how long the pipes may stay open before they are closed on our side. */
const pipeGrace = Duration.seconds(1)

/** The key of a job's one report: posted once, whatever the number of tries (Followups). */
const reportKey = (id: number) => `job:${id}:ended`

const originOfRow = (row: JobRow): WorkOrigin => ({
  interface: row.originInterface,
  channel: row.originChannel,
  userId: row.originUser
})

interface Running {
  readonly kill: Deferred.Deferred<void>
  readonly fiber: Deferred.Deferred<Fiber.RuntimeFiber<void>>
}

type Outcome =
  | { readonly _tag: "exited"; readonly code: number | null; readonly signal: string | null; readonly error?: string }
  | { readonly _tag: "killed" }
  | { readonly _tag: "timed_out" }

const readText = (file: string): string => NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8") : ""

/**
 * Background jobs in the running agent: a row in kern.db per job, a fiber per running job (none when none runs)
 * waiting on its exit, a kill, or its lifetime. Its end stores the output as an artifact of the session that started
 * it, posts the report into its conversation (Followups, exactly once per job) and then marks the row ended; a row
 * still `running` at the next start (the agent stopped, or died between the two) is reported as interrupted with its
 * output so far, never run again. The processes a dead runtime left are reaped when the lock is taken (AgentLock).
 */
export const layer = Layer.scoped(
  Jobs,
  Effect.gen(function*() {
    const { config, paths } = yield* AgentConfig
    const limits = config.jobs
    const store = yield* JobStore
    const artifacts = yield* ArtifactStore
    const followups = yield* Followups
    const scope = yield* Effect.scope
    const jobsDir = NodePath.join(paths.kernDir, "jobs")
    yield* Effect.try({
      try: () => NodeFs.mkdirSync(jobsDir, { recursive: true, mode: privateDirMode }),
      catch: (error) => toolFailure("UNEXPECTED", `jobs: could not create ${jobsDir}: ${String(error)}`)
    })
    const running = yield* Ref.make(new Map<number, Running>())
    const starting = yield* Effect.makeSemaphore(1)

    /** Stores the output, reports the end once, then records it: a crash in between is reported at the next start. */
    const conclude = (row: JobRow, end: Omit<JobEnd, "artifactId">, tail: string) =>
      Effect.gen(function*() {
        const text = readText(row.outputFile)
        const artifactId = text === ""
          ? null
          : (yield* artifacts.put({ sessionId: row.sessionId, toolId: "bash", text })).artifactId
        const ended = { ...row, ...end, artifactId }
        yield* followups.post(reportKey(row.id), originOfRow(row), endReport(ended, end.endedAtMs, tail, artifactId, limits.maxLifetimeMs))
        yield* store.end(row.id, { ...end, artifactId })
        yield* Effect.sync(() => NodeFs.rmSync(row.outputFile, { force: true }))
      }).pipe(Effect.withSpan("kern.jobs.conclude", { attributes: { job: row.id, state: end.state } }))

    const recover = (row: JobRow) =>
      Effect.gen(function*() {
        yield* reapTag(row.tag)
        const now = yield* Clock.currentTimeMillis
        const size = NodeFs.existsSync(row.outputFile) ? NodeFs.statSync(row.outputFile).size : 0
        yield* conclude(
          row,
          { state: "interrupted", endedAtMs: now, exitCode: null, signal: null, outputBytes: size, droppedBytes: 0 },
          fileTail(row.outputFile)
        )
      }).pipe(
        Effect.catchAll((error) => Effect.logWarning(`kern: could not report interrupted job ${row.id}: ${error.message}`))
      )

    for (const row of yield* store.running) yield* recover(row)

    const waitFor = (row: JobRow, proc: JobProcess, kill: Deferred.Deferred<void>, lifetimeMs: number) =>
      Effect.gen(function*() {
        const outcome: Outcome = yield* Effect.raceAll([
          Deferred.await(proc.exited).pipe(
            Effect.map((status): Outcome => ({ _tag: "exited", ...status })),
            Effect.catchAll((failure) => Effect.succeed<Outcome>({ _tag: "exited", code: 127, signal: null, error: failure.message }))
          ),
          Effect.as(Deferred.await(kill), { _tag: "killed" } as Outcome),
          Effect.as(Effect.sleep(Duration.millis(lifetimeMs)), { _tag: "timed_out" } as Outcome)
        ])
        // Whatever it left running dies with it, as with a foreground bash call.
        yield* killTagged(row.tag, proc.pid)
        yield* Deferred.await(proc.closed).pipe(Effect.timeoutOption(pipeGrace))
        yield* Effect.sync(proc.close)
        const now = yield* Clock.currentTimeMillis
        const { bytes, dropped } = proc.counts()
        const end: Omit<JobEnd, "artifactId"> = outcome._tag === "exited"
          ? { state: "finished", endedAtMs: now, exitCode: outcome.code, signal: outcome.signal, outputBytes: bytes, droppedBytes: dropped }
          : { state: outcome._tag, endedAtMs: now, exitCode: null, signal: "SIGKILL", outputBytes: bytes, droppedBytes: dropped }
        const tail = outcome._tag === "exited" && outcome.error !== undefined ? `${proc.tail()}\n${outcome.error}` : proc.tail()
        yield* conclude(row, end, tail).pipe(
          Effect.catchAll((error) => Effect.logWarning(`kern: could not report the end of job ${row.id}: ${error.message}`))
        )
      }).pipe(
        // The agent stops: the job's processes die with it; its row stays `running`, reported at the next start.
        Effect.onInterrupt(() => Effect.zipRight(killTagged(row.tag, proc.pid), Effect.sync(proc.close))),
        Effect.ensuring(Ref.update(running, (map) => {
          const next = new Map(map)
          next.delete(row.id)
          return next
        }))
      )

    const start = (input: JobStart) =>
      starting.withPermits(1)(Effect.gen(function*() {
        const count = (yield* Ref.get(running)).size
        if (count >= limits.maxConcurrent) {
          return yield* toolFailure(
            "RATE_LIMITED",
            `${count} background jobs are running, as many as jobs.maxConcurrent (${limits.maxConcurrent}) allows: ` +
              `wait for one to end or kill one (jobs { action: "kill", id }) before starting another`
          )
        }
        const tag = yield* makeCallTag(input.folder)
        const origin = originOf(input.ctx)
        const startedAtMs = yield* Clock.currentTimeMillis
        const outputFile = NodePath.join(jobsDir, `${tag}.out`)
        const id = yield* store.add({
          command: input.command,
          conversation: input.ctx.audience?.conversationId ?? mainConversation,
          originInterface: origin.interface,
          originChannel: origin.channel,
          originUser: origin.userId,
          sessionId: sessionOf(input.ctx),
          tag,
          outputFile,
          startedAtMs
        })
        const proc = yield* spawnJob({
          command: input.command,
          cwd: input.cwd,
          env: input.env,
          tag,
          outputFile,
          maxOutputBytes: limits.maxOutputBytes
        }).pipe(Effect.tapError(() =>
          store.end(id, { state: "finished", endedAtMs: startedAtMs, exitCode: null, signal: null, outputBytes: 0, droppedBytes: 0, artifactId: null })
        ))
        if (proc.pid !== undefined) yield* store.setPid(id, proc.pid)
        const row = yield* store.get(id).pipe(Effect.flatMap(Option.match({
          onNone: () => Effect.fail(toolFailure("UNEXPECTED", `jobs: job ${id} vanished from kern.db`)),
          onSome: Effect.succeed
        })))
        const kill = yield* Deferred.make<void>()
        const fiber = yield* Deferred.make<Fiber.RuntimeFiber<void>>()
        yield* Ref.update(running, (map) => new Map(map).set(id, { kill, fiber }))
        const lifetimeMs = Math.min(input.lifetimeMs ?? limits.maxLifetimeMs, limits.maxLifetimeMs)
        yield* Deferred.succeed(fiber, yield* Effect.forkIn(waitFor(row, proc, kill, lifetimeMs), scope))
        yield* Effect.annotateCurrentSpan({ job: id })
        return row
      })).pipe(Effect.withSpan("kern.jobs.start"))

    /** A job the run may see: a conversation's own, or any for the operator; the same answer for another's and none. */
    const visible = (id: number, ctx: Pick<RunContextData, "audience">) =>
      Effect.flatMap(store.get(id), (found): Effect.Effect<JobRow, ToolFailure> => {
        const mine = visibleConversation(ctx)
        return Option.isSome(found) && (mine === null || found.value.conversation === mine)
          ? Effect.succeed(found.value)
          : Effect.fail(toolFailure(
            "NOT_FOUND",
            mine === null
              ? `no job ${id}; jobs { action: "list" } lists them`
              : `no job ${id} in this conversation (a conversation sees and controls only its own jobs)`
          ))
      })

    const output = (id: number, ctx: Pick<RunContextData, "audience">, page: { readonly offset: number; readonly limit: number }) =>
      Effect.gen(function*() {
        const row = yield* visible(id, ctx)
        const text = row.artifactId === null ? readText(row.outputFile) : yield* artifacts.get(row.artifactId)
        const lines = text === "" ? [] : splitLines(text)
        const shown = lines.slice(page.offset - 1, page.offset - 1 + page.limit)
        const width = String(lines.length).length
        const next = page.offset - 1 + shown.length
        const body = shown.map((line, index) => numberLine(page.offset + index, line, width))
        const result: JobOutput = {
          id,
          state: row.state,
          totalLines: lines.length,
          text: [
            `job ${id} (${row.state}): ${lines.length} lines${row.state === "running" ? " so far" : ""}`,
            ...(body.length === 0 ? [`(no lines from ${page.offset})`] : body),
            ...(next < lines.length ? [`[${lines.length - next} more lines; continue with offset ${next + 1}]`] : [])
          ].join("\n"),
          ...(next < lines.length ? { nextOffset: next + 1 } : {})
        }
        return result
      }).pipe(Effect.withSpan("kern.jobs.output"))

    const kill = (id: number, ctx: Pick<RunContextData, "audience">) =>
      Effect.gen(function*() {
        const row = yield* visible(id, ctx)
        const handle = (yield* Ref.get(running)).get(id)
        if (row.state !== "running" || handle === undefined) {
          return yield* toolFailure("VALIDATION_ERROR", `job ${id} is not running (it is ${row.state})`)
        }
        yield* Deferred.succeed(handle.kill, undefined)
        yield* Fiber.await(yield* Deferred.await(handle.fiber))
        return yield* visible(id, ctx)
      }).pipe(Effect.withSpan("kern.jobs.kill"))

    return Jobs.of({
      start,
      list: (ctx) => store.recent(visibleConversation(ctx)),
      get: visible,
      output,
      kill
    })
  })
)

/** The session the job's output is an artifact of: the run's, so that conversation may reopen it. */
const sessionOf = (ctx: RunContextData) => ctx.sessionId === "" ? ctx.runId : ctx.sessionId
