import { Effect, Exit } from "effect"
import { conversationIdOf, type TurnUsage } from "./TurnEvent.js"
import type { QueuedMessage } from "./MessageQueue.js"
import { annotateKeptSpan } from "../kernel/keptSpan.js"

/**
 * What an operator asks of a turn in a trace, on its `kern.agent.turn` span: whose conversation, from which channel
 * and user, which model; at the end its steps, tokens in and out, cost and how it ended. Names follow OpenTelemetry's
 * GenAI conventions where they exist (`gen_ai.*`), kern's own (`kern.*`) elsewhere.
 */
export const turnSpanAttributes = (message: QueuedMessage, sessionId: string, modelId: string) => ({
  "kern.turn.id": message.turnId,
  "kern.conversation.id": message.conversation,
  "kern.conversation.channel": conversationIdOf(message),
  "kern.session.id": sessionId,
  "kern.interface": message.interface,
  "kern.channel": message.channel,
  "kern.user.id": message.userId,
  ...(modelId === "" ? {} : { "gen_ai.request.model": modelId })
})

/** Tokens and cost, on a turn's span or a model step's. */
export const usageAttributes = (usage: TurnUsage) => ({
  "gen_ai.usage.input_tokens": usage.inputTokens,
  "gen_ai.usage.output_tokens": usage.outputTokens,
  "kern.usage.cached_input_tokens": usage.cachedInputTokens,
  "kern.usage.cost_usd_cents": usage.costUsdCents
})

/** What the turn's span says of its end (a TurnOutcome; structural, so the web UI's imports stay free of the turn's). */
interface Ended {
  readonly steps: number
  readonly usage: TurnUsage
  readonly failure?: { readonly _tag: string } | undefined
}

/** The turn's ending on its span: steps, usage, and `ok` or the failure's tag. */
export const spannedTurnEnd = <A extends Ended, E, R>(turn: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.onExit(turn, (exit) =>
    Exit.isSuccess(exit)
      ? annotateKeptSpan(() => ({
        "kern.turn.outcome": exit.value.failure?._tag ?? "ok",
        "kern.turn.steps": exit.value.steps,
        ...usageAttributes(exit.value.usage)
      }))
      : Effect.void)
