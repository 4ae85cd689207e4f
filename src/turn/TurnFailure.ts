import { AiError } from "@effect/ai"
import { Schema } from "effect"
import { BudgetCap, type BudgetLimits, type BudgetUsage, exceededCap } from "../kernel/RunBudget.js"
import { BudgetExceeded, budgetRefusal } from "../model/BudgetExceeded.js"
import { fromAiError, ProviderErrorReason } from "../model/ProviderError.js"
import { WatchdogTimeout } from "./modelStep.js"

/** The model provider failed (after retries): why, the HTTP status and the wait it asked for, if any. */
export class ProviderFailed extends Schema.TaggedError<ProviderFailed>()("ProviderFailed", {
  reason: ProviderErrorReason,
  status: Schema.optional(Schema.Number),
  retryAfterSeconds: Schema.optional(Schema.Number),
  message: Schema.String
}) {}

/** The model's stream went silent for longer than the watchdog allows. */
export class WatchdogFired extends Schema.TaggedError<WatchdogFired>()("WatchdogFired", {
  message: Schema.String
}) {}

/** A cap of the turn's budget was reached before the model finished: which one, its limit and what was used. */
export class BudgetExhausted extends Schema.TaggedError<BudgetExhausted>()("BudgetExhausted", {
  cap: BudgetCap,
  limit: Schema.Number,
  toolCallsUsed: Schema.Number,
  promptTokensUsed: Schema.Number,
  costUsdCentsUsed: Schema.Number,
  message: Schema.String
}) {}

/** The turn used every step (`maxSteps`) and the model still wanted tools. */
export class StepLimitReached extends Schema.TaggedError<StepLimitReached>()("StepLimitReached", {
  maxSteps: Schema.Number,
  message: Schema.String
}) {}

/** The session file could not be written (the disk is full, say): the turn did not happen; send the message again. */
export class SessionNotWritten extends Schema.TaggedError<SessionNotWritten>()("SessionNotWritten", {
  reason: Schema.Literal("disk-full", "io"),
  message: Schema.String
}) {}

/**
 * Someone ended the turn (a Stop button, `/stop`, POST /turns/:turnId/stop): `by` is who, the operator or the user
 * whose turn it was. The turn ENDS, it does not crash: what was said so far is recorded, and the message is not
 * answered again after a restart.
 */
export class Stopped extends Schema.TaggedError<Stopped>()("Stopped", {
  by: Schema.String,
  message: Schema.String
}) {}

/** Why a turn ended without the model's final answer; what `kern chat --json` prints and library callers match on. */
export const TurnFailure = Schema.Union(
  ProviderFailed,
  WatchdogFired,
  BudgetExhausted,
  BudgetExceeded,
  StepLimitReached,
  SessionNotWritten,
  Stopped
)
export type TurnFailure = typeof TurnFailure.Type

/** A failure as plain JSON (`_tag` and fields), as `kern chat --json`, the event log and HTTP clients see it. */
export const encodeFailure = (failure: TurnFailure): typeof TurnFailure.Encoded => Schema.encodeSync(TurnFailure)(failure)

/** A failed model step as a TurnFailure: a watchdog, a spend cap, or the provider's error with its reason and status. */
export const modelStepFailure = (error: unknown): TurnFailure => {
  if (error instanceof WatchdogTimeout) return new WatchdogFired({ message: error.message })
  // The spend ceiling refused the call before it was made (limits): the turn ends with the cap named.
  const refused = budgetRefusal(error)
  if (refused !== undefined) return refused
  const provider = AiError.isAiError(error) ? fromAiError(error) : undefined
  if (provider !== undefined) {
    return new ProviderFailed({
      reason: provider.reason,
      message: provider.message,
      ...(provider.status === undefined ? {} : { status: provider.status }),
      ...(provider.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: provider.retryAfterSeconds })
    })
  }
  return new ProviderFailed({ reason: "provider", message: error instanceof Error ? error.message : String(error) })
}

/** The budget cap `usage` has reached, as a TurnFailure; undefined while every cap has room. */
export const budgetFailure = (limits: BudgetLimits, usage: BudgetUsage): BudgetExhausted | undefined => {
  const cap = exceededCap(limits, usage)
  if (cap === undefined) return undefined
  return new BudgetExhausted({
    cap,
    limit: limits[cap],
    toolCallsUsed: usage.toolCallsUsed,
    promptTokensUsed: usage.promptTokensUsed,
    costUsdCentsUsed: usage.costUsdCentsUsed,
    message: `the turn's budget is used up (${cap} ${limits[cap]} reached: ${usage.toolCallsUsed} tool calls, ` +
      `${usage.promptTokensUsed} prompt tokens, ${usage.costUsdCentsUsed.toFixed(2)}¢)`
  })
}

/** The turn was stopped by `by` (a user id; `operator` for the terminal, the web UI and the HTTP API). */
export const stoppedBy = (by: string): Stopped =>
  new Stopped({ by, message: by === "operator" ? "stopped by the operator" : `stopped by ${by}` })

export const stepLimit = (maxSteps: number): StepLimitReached =>
  new StepLimitReached({ maxSteps, message: `stopped after ${maxSteps} steps (maxSteps)` })
