import { Context, Effect, Layer } from "effect"
import { mainConversation, seesEverything } from "../kernel/Audience.js"
import type { RunContextData } from "../kernel/RunContext.js"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import type { JobRow } from "./JobStore.js"

/** What starts a background job: the command and where it runs, and the run that asked (its conversation and origin). */
export interface JobStart {
  readonly command: string
  /** Where it runs: the run's workspace root (the agent folder, or `shared/` in a non-operator's conversation). */
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** The agent folder's real path: the job's processes are tagged with it, so the next start reaps what is left. */
  readonly folder: string
  /** At most the config's `jobs.maxLifetimeMs`. */
  readonly lifetimeMs?: number | undefined
  readonly ctx: RunContextData
}

/** A page of a job's output (stdout and stderr together, as they came). */
export interface JobOutput {
  readonly id: number
  readonly state: JobRow["state"]
  readonly totalLines: number
  readonly text: string
  readonly nextOffset?: number
}

/**
 * Which jobs a run sees and controls: the operator's conversation (and a run outside any) all of them; any other
 * conversation only its own (null: all).
 */
export const visibleConversation = (ctx: Pick<RunContextData, "audience">): string | null =>
  seesEverything(ctx) ? null : ctx.audience?.conversationId ?? mainConversation

export interface JobsService {
  /** Starts `command` in the background and returns its row at once; refused beyond `jobs.maxConcurrent`. */
  readonly start: (input: JobStart) => Effect.Effect<JobRow, ToolFailure>
  /** The latest jobs the run may see, newest first. */
  readonly list: (ctx: Pick<RunContextData, "audience">) => Effect.Effect<ReadonlyArray<JobRow>, ToolFailure>
  /** One job the run may see. */
  readonly get: (id: number, ctx: Pick<RunContextData, "audience">) => Effect.Effect<JobRow, ToolFailure>
  /** Lines of its output so far (running) or in full (ended), from line `offset` (1-indexed). */
  readonly output: (
    id: number,
    ctx: Pick<RunContextData, "audience">,
    page: { readonly offset: number; readonly limit: number }
  ) => Effect.Effect<JobOutput, ToolFailure>
  /** Kills a running job of the run's own (or, for the operator, any); its end is reported as `killed`. */
  readonly kill: (id: number, ctx: Pick<RunContextData, "audience">) => Effect.Effect<JobRow, ToolFailure>
}

/** Background bash commands: only the running agent runs them (src/runtime/jobsLive.ts); elsewhere `unavailable`. */
export class Jobs extends Context.Tag("kern/tools/Jobs")<Jobs, JobsService>() {}

const refused = toolFailure(
  "VALIDATION_ERROR",
  "background jobs run only in a running agent (kern run, kern start): their end is reported as a later turn; " +
    "run the command without background here"
)

/** Jobs for a process that runs no agent (`kern kernel exec`): every action is refused with the reason. */
export const unavailable: Layer.Layer<Jobs> = Layer.succeed(Jobs, {
  start: () => Effect.fail(refused),
  list: () => Effect.fail(refused),
  get: () => Effect.fail(refused),
  output: () => Effect.fail(refused),
  kill: () => Effect.fail(refused)
})
