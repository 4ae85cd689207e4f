import { Clock, Effect, Exit } from "effect"
import type { QueuedMessage } from "./MessageQueue.js"
import type { TurnUsage } from "./TurnEvent.js"
import type { TurnOutcome } from "./turnTally.js"

/** Where a turn happens, on every line it logs (its tool calls, approvals, provider retries included). */
export const turnAnnotations = (message: QueuedMessage, sessionId: string) => ({
  turn: message.turnId,
  session: sessionId,
  channel: `${message.interface}:${message.channel}`,
  user: message.userId
})

const usageFields = (usage: TurnUsage) => ({
  inputTokens: usage.inputTokens,
  outputTokens: usage.outputTokens,
  cachedInputTokens: usage.cachedInputTokens,
  costUsdCents: usage.costUsdCents
})

const tokens = (usage: TurnUsage) =>
  `${usage.inputTokens} in / ${usage.outputTokens} out tokens, ${Number(usage.costUsdCents.toFixed(4))}¢`

/**
 * A turn logged from start to end: annotated with its turn, session, channel and user, inside an `inTurn` log span; its
 * end says how it ended, how long it took, its steps, tokens and cost (a warning when it ended without an answer, an
 * error when it could not run). The span says how far into the turn each line is (`turn` is already its id).
 */
export const loggedTurn = (message: QueuedMessage, sessionId: string) =>
<E, R>(turn: Effect.Effect<TurnOutcome, E, R>): Effect.Effect<TurnOutcome, E, R> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    yield* Effect.logInfo(`turn started (${message.text.length} characters)`)
    return yield* Effect.onExit(turn, (exit) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const durationMs = now - started
        if (Exit.isFailure(exit)) {
          return Effect.logError(`turn could not run (${durationMs} ms)`, exit.cause).pipe(
            Effect.annotateLogs({ outcome: "error", durationMs })
          )
        }
        const outcome = exit.value
        const how = outcome.failure === undefined ? "ok" : outcome.failure._tag
        const text = outcome.failure === undefined
          ? `turn ended in ${durationMs} ms: ${outcome.steps} step(s), ${tokens(outcome.usage)}`
          : `turn ended without an answer in ${durationMs} ms (${outcome.failure.message}): ${outcome.steps} step(s), ${tokens(outcome.usage)}`
        // Info either way: the turn's failure is the channel's to show (a foreground command prints it once, on stderr);
        // in the log its `outcome` names it.
        return Effect.logInfo(text).pipe(
          Effect.annotateLogs({
            outcome: how,
            durationMs,
            modelMs: Math.round(outcome.modelMs),
            steps: outcome.steps,
            delivered: outcome.delivered,
            ...usageFields(outcome.usage)
          })
        )
      }))
  }).pipe(Effect.withLogSpan("inTurn"), Effect.annotateLogs(turnAnnotations(message, sessionId)))

/** One model step of a turn, at debug: its tokens, its wait and how many tool calls it asked for. */
export const logModelStep = (step: number, usage: TurnUsage, ms: number, calls: number) =>
  Effect.logDebug(`model step ${step}: ${tokens(usage)} in ${Math.round(ms)} ms, ${calls} tool call(s)`).pipe(
    Effect.annotateLogs({ step, durationMs: Math.round(ms), toolCalls: calls, ...usageFields(usage) })
  )
