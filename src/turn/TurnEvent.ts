import { Schema } from "effect"
import { RecallHit } from "../recall/schema.js"
import { Usage } from "../session/messages.js"
import { QueuedMessage } from "./MessageQueue.js"
import { TurnFailure } from "./TurnFailure.js"

const event = <const T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ type: Schema.Literal(type), ...fields })

/** A model step begins (the first one right after the message is recorded). */
export const StepEvent = event("step", { step: Schema.Number })
/** Streamed reply text; a trailing NO_REPLY marker never is (the turn takes it out at the source, replyFilter.ts). */
export const TextEvent = event("text", { delta: Schema.String })
export const ToolCallEvent = event("tool-call", { id: Schema.String, name: Schema.String, params: Schema.Unknown })
export const ToolResultEvent = event("tool-result", {
  id: Schema.String,
  name: Schema.String,
  isError: Schema.Boolean,
  text: Schema.String,
  durationMs: Schema.Number
})
/** A message of the turn's channel that arrived during the turn, given to the model at this step. */
export const InjectedEvent = event("injected", { text: Schema.String, message: QueuedMessage })
/** The turn's token counts and cost. */
export const UsageEvent = event("usage", Usage.fields)
export const ErrorEvent = event("error", {
  message: Schema.String,
  /** The failure as data: `_tag` (ProviderFailed, WatchdogFired, BudgetExhausted, StepLimitReached, SessionNotWritten) and its fields. */
  // Suspended: TurnFailure reaches modelStep, which imports this module, so TurnFailure may not be defined yet here.
  failure: Schema.suspend((): Schema.Schema<typeof TurnFailure.Encoded> => Schema.encodedSchema(TurnFailure))
})
/** The turn ended: its reply (without a NO_REPLY marker), and whether it said something to someone. */
export const DoneEvent = event("done", { reply: Schema.String, delivered: Schema.Boolean, steps: Schema.Number })
/** The context's own work the turn waits for (summarizing an overflow), as a progress line. */
export const ContextEvent = event("context", { text: Schema.String })
/** Auto-recall added these hits (in `tokens` tokens) before the user's message; shown, never persisted. */
export const RecallEvent = event("recall", { query: Schema.String, hits: Schema.Array(RecallHit), tokens: Schema.Number })

/** What a turn reports as it goes: streamed to the terminal, the channels, the web UI (via RuntimeFeed) and `--json`. */
export const TurnEvent = Schema.Union(
  StepEvent,
  TextEvent,
  ToolCallEvent,
  ToolResultEvent,
  InjectedEvent,
  UsageEvent,
  ErrorEvent,
  DoneEvent,
  ContextEvent,
  RecallEvent
)
export type TurnEvent = typeof TurnEvent.Type

/**
 * Where a turn's event belongs: the turn (what clients follow it by, POST /message's turnId) and the conversation (the
 * chat the message came from, `<interface>:<channel>`; every conversation writes one session today, and conversations
 * per person will key their own sessions by it).
 */
export const TurnIds = Schema.Struct({ turnId: Schema.String, conversationId: Schema.String })
export type TurnIds = typeof TurnIds.Type

/** A turn's event as it leaves the process (`kern chat --json`): the event with its turn and conversation ids. */
export const TurnEventLine = Schema.extend(TurnEvent, TurnIds)
export type TurnEventLine = typeof TurnEventLine.Type

/** The conversation a queued message belongs to. */
export const conversationIdOf = (message: Pick<QueuedMessage, "interface" | "channel">): string =>
  `${message.interface}:${message.channel}`

/** The ids every event of the turn `message` started carries. */
export const turnIdsOf = (message: QueuedMessage): TurnIds => ({
  turnId: message.turnId,
  conversationId: conversationIdOf(message)
})

/** A turn's (or a step's) token counts and cost: the shape sessions store with each answer. */
export type TurnUsage = Usage

export const noUsage: TurnUsage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0 }

export const addUsage = (a: TurnUsage, b: TurnUsage): TurnUsage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
  cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  costUsdCents: a.costUsdCents + b.costUsdCents
})
