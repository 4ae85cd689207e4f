import { Schema } from "effect"
import { Usage } from "../session/messages.js"
import type { QueuedMessage } from "./MessageQueue.js"
import { TurnFailure } from "./TurnFailure.js"

/**
 * Where a turn's event belongs: the turn (what clients follow it by, POST /message's turnId) and the conversation (the
 * chat the message came from, `<interface>:<channel>`; every conversation writes one session today, and conversations
 * per person will key their own sessions by it).
 */
export const TurnIds = Schema.Struct({ turnId: Schema.String, conversationId: Schema.String })
export type TurnIds = typeof TurnIds.Type

const event = <const T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ type: Schema.Literal(type), ...TurnIds.fields, ...fields })

/**
 * A message reached the turn: the one that started it (`messageId` = `turnId`, its first event), or one of its
 * conversation that arrived meanwhile and is given to the model at the next step (`messageId` = the id POST /message
 * accepted it under).
 */
export const IncomingEvent = event("incoming", {
  messageId: Schema.String,
  text: Schema.String,
  interface: Schema.String,
  channel: Schema.String,
  userId: Schema.String
})
/** The model is working on a step of the turn. */
export const ThinkingEvent = event("thinking", { step: Schema.Number })
/** Streamed reply text; a trailing NO_REPLY marker never is (the turn takes it out at the source, replyFilter.ts). */
export const TextDeltaEvent = event("text-delta", { delta: Schema.String })
export const ToolCallEvent = event("tool-call", { id: Schema.String, name: Schema.String, params: Schema.Unknown })
export const ToolResultEvent = event("tool-result", {
  id: Schema.String,
  name: Schema.String,
  isError: Schema.Boolean,
  /** The result as the model got it (compacted output ends with a note naming the stored artifact). */
  text: Schema.String,
  durationMs: Schema.Number
})
/** Auto-recall put `hits` passages of past conversation (`tokens` tokens) before the user's message; never persisted. */
export const RecallEvent = event("recall", { query: Schema.String, hits: Schema.Number, tokens: Schema.Number })
/** The context's own work the turn waits for (summarizing an overflow), as a progress line. */
export const ContextEvent = event("context", { text: Schema.String })
/** The model provider failed and the call is tried again after `waitMs` (429, 5xx, a dropped connection), as a progress line. */
export const RetryEvent = event("retry", { text: Schema.String, waitMs: Schema.Number })
export const ErrorEvent = event("error", {
  message: Schema.String,
  /** The failure as data: `_tag` (ProviderFailed, WatchdogFired, BudgetExhausted, StepLimitReached, SessionNotWritten, Stopped) and its fields. */
  // Suspended: TurnFailure reaches modelStep, which imports this module, so TurnFailure may not be defined yet here.
  failure: Schema.suspend((): Schema.Schema<typeof TurnFailure.Encoded> => Schema.encodedSchema(TurnFailure))
})
/** The turn ended: its reply (without a NO_REPLY marker), its steps and usage, and whether it said something to someone. */
export const FinishEvent = event("finish", {
  reply: Schema.String,
  steps: Schema.Number,
  usage: Usage,
  /** false when the reply was empty or NO_REPLY: nothing was said to anyone. */
  delivered: Schema.Boolean
})

/**
 * What a turn reports as it goes, each event naming its turn and conversation: the very events `GET /events` streams
 * (the server adds only `seq` and `at`), `kern chat --json` prints, and the terminals, the chat channels and the web UI
 * follow.
 */
export const TurnEvent = Schema.Union(
  IncomingEvent,
  ThinkingEvent,
  TextDeltaEvent,
  ToolCallEvent,
  ToolResultEvent,
  RecallEvent,
  ContextEvent,
  RetryEvent,
  ErrorEvent,
  FinishEvent
)
export type TurnEvent = typeof TurnEvent.Type

/** The types of a turn's events. */
export const turnEventTypes: ReadonlySet<string> = new Set(TurnEvent.members.map((member) => member.fields.type.literals[0]))

/** Whether an event of the agent (a turn's, or one of the agent's own, GET /events) is one of a turn's. */
export const isTurnEvent = <E extends { readonly type: string }>(event: E): event is Extract<E, { readonly type: TurnEvent["type"] }> =>
  turnEventTypes.has(event.type)

/** An event as the turn's steps state it; the turn adds its ids (TurnRunner's emit). */
export type TurnEventBody = TurnEvent extends infer E ? E extends TurnEvent ? Omit<E, keyof TurnIds> : never : never

/** The turn and conversation of an event, to stamp on another of the same turn. */
export const idsOf = (event: TurnIds): TurnIds => ({ turnId: event.turnId, conversationId: event.conversationId })

/** The conversation a queued message belongs to. */
export const conversationIdOf = (message: Pick<QueuedMessage, "interface" | "channel">): string =>
  `${message.interface}:${message.channel}`

/** The ids every event of the turn `message` started carries. */
export const turnIdsOf = (message: QueuedMessage): TurnIds => ({
  turnId: message.turnId,
  conversationId: conversationIdOf(message)
})

/** The event saying `message` reached the turn (its own message, or one injected into it). */
export const incomingOf = (message: QueuedMessage): Omit<typeof IncomingEvent.Type, keyof TurnIds> => ({
  type: "incoming",
  messageId: message.turnId,
  text: message.text,
  interface: message.interface,
  channel: message.channel,
  userId: message.userId
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
