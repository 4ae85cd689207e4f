import { Schema } from "effect"
import { TurnEvent } from "../turn/TurnEvent.js"
import type { Attachment } from "../session/messages.js"

/**
 * Every event of a running agent, as `GET /events` streams it and the terminals follow it: its turns' events
 * (src/turn/TurnEvent.ts, as the turn emits them) and, beside them, the agent's own (a reply or message sent, the
 * heartbeat, approvals, a resumed stream's reset). Changes are additive only: clients built against an older version
 * keep working.
 */

/** A tool call waiting for approval: the call in full, where its turn came from, and when it is denied unanswered. */
export const PendingApprovalInfo = Schema.Struct({
  id: Schema.String,
  toolId: Schema.String,
  /** The call's arguments in full. */
  args: Schema.Unknown,
  reason: Schema.String,
  interface: Schema.String,
  channel: Schema.String,
  userId: Schema.String,
  requestedAt: Schema.String,
  /** ISO time after which the call is denied. */
  expiresAt: Schema.String
})
export type PendingApprovalInfo = typeof PendingApprovalInfo.Type

/** A question a turn asks the person it serves (ask_user_question): only they may answer (POST /questions/:id). */
export const PendingQuestionInfo = Schema.Struct({
  id: Schema.String,
  question: Schema.String,
  /** The choices, in order (answers name them by their 0-based index); empty: a free-text question. */
  options: Schema.Array(Schema.String),
  multiSelect: Schema.Boolean,
  allowText: Schema.Boolean,
  interface: Schema.String,
  channel: Schema.String,
  userId: Schema.String,
  requestedAt: Schema.String,
  /** ISO time after which the turn goes on without an answer. */
  expiresAt: Schema.String
})
export type PendingQuestionInfo = typeof PendingQuestionInfo.Type

/** A file as clients show it: its media store id (`GET /media/<id>`), name, type and size; never its bytes or text. */
export const FileInfo = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  mediaType: Schema.String,
  kind: Schema.String,
  bytes: Schema.Number,
  /** A PDF's pages. */
  pages: Schema.optional(Schema.Number)
})
export type FileInfo = typeof FileInfo.Type

/** A stored file (an Attachment) as clients are shown it. */
export const fileInfo = (file: Attachment): FileInfo => ({
  id: file.id,
  name: file.name,
  mediaType: file.mediaType,
  kind: file.kind,
  bytes: file.bytes,
  ...(file.pages === undefined ? {} : { pages: file.pages })
})

/** The agent said something to someone (a turn's delivered reply, or the message tool). */
export const OutgoingEvent = Schema.Struct({
  type: Schema.Literal("outgoing"),
  turnId: Schema.optional(Schema.String),
  conversationId: Schema.optional(Schema.String),
  text: Schema.String,
  interface: Schema.String,
  channel: Schema.optional(Schema.String),
  /** The file it sent (the message tool's `file`). */
  file: Schema.optional(FileInfo)
})

/** A heartbeat tick: sent (queued a heartbeat turn) or skipped, and how a heartbeat turn ended (ran, failed). */
export const HeartbeatEvent = Schema.Struct({
  type: Schema.Literal("heartbeat"),
  turnId: Schema.optional(Schema.String),
  outcome: Schema.Literal("sent", "skipped", "ran", "failed"),
  reason: Schema.String
})

/** A DESTRUCTIVE call waits for a person: POST /approvals/:id answers it. */
export const ApprovalEvent = Schema.Struct({ type: Schema.Literal("approval"), ...PendingApprovalInfo.fields })

/** An approval was answered (by `operator` or a chat operator such as `telegram:42`) or timed out. */
export const ApprovalResolvedEvent = Schema.Struct({
  type: Schema.Literal("approval-resolved"),
  id: Schema.String,
  approved: Schema.Boolean,
  outcome: Schema.Literal("approved", "denied", "timeout"),
  by: Schema.String
})

/** A turn waits for its person's answer to a question. */
export const QuestionEvent = Schema.Struct({ type: Schema.Literal("question"), ...PendingQuestionInfo.fields })

/** A question was answered (by whom, with what), timed out, or its turn was stopped. */
export const QuestionResolvedEvent = Schema.Struct({
  type: Schema.Literal("question-resolved"),
  id: Schema.String,
  outcome: Schema.Literal("answered", "timeout", "stopped"),
  choices: Schema.Array(Schema.String),
  text: Schema.optional(Schema.String),
  by: Schema.String
})

/**
 * A daily spend cap (`limits`) was reached: told to the operator once per cap, whose and day. Its calls are refused
 * until the day ends or the cap is raised.
 */
export const LimitEvent = Schema.Struct({
  type: Schema.Literal("limit"),
  cap: Schema.Literal("perDay", "perUser", "perChannel"),
  measure: Schema.Literal("usdCents", "tokens"),
  limit: Schema.Number,
  spent: Schema.Number,
  /** '' for the whole agent, else the user or channel. */
  key: Schema.String,
  day: Schema.String,
  message: Schema.String
})

/** The client resumed from a Last-Event-ID older than the replay buffer: some events are lost; reload state. */
export const ResetEvent = Schema.Struct({ type: Schema.Literal("reset"), missedFrom: Schema.Number })

/** An event of the agent before the event hub numbers it: a turn's, or the agent's own. */
export const AgentEventInput = Schema.Union(
  ...TurnEvent.members,
  OutgoingEvent,
  HeartbeatEvent,
  ApprovalEvent,
  ApprovalResolvedEvent,
  QuestionEvent,
  QuestionResolvedEvent,
  LimitEvent,
  ResetEvent
)
export type AgentEventInput = typeof AgentEventInput.Type

/** What the event hub adds to each event, and all it adds. */
export const EventStamp = Schema.Struct({
  /** Sequence number, increasing by one per event of this server. */
  seq: Schema.Number,
  /** ISO time the event happened. */
  at: Schema.String
})

/** An event as `GET /events` sends it: numbered and stamped. */
export const AgentEvent = Schema.extend(AgentEventInput, EventStamp)
export type AgentEvent = typeof AgentEvent.Type
export type AgentEventType = AgentEvent["type"]

/** SSE frames carry the event as JSON in `data:`. */
export const AgentEventJson = Schema.parseJson(AgentEvent)
