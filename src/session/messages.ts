import { Schema } from "effect"

/** Where a message came from: the envelope every queued message carries; `time` is local, with its offset. */
export class Envelope extends Schema.Class<Envelope>("Envelope")({
  interface: Schema.String,
  channel: Schema.String,
  userId: Schema.String,
  time: Schema.String,
  /**
   * The turn the message belongs to: the one it started (its own id), or the running turn it was injected into. How
   * a restart finds the reply of a turn it must still deliver, and where that turn ends.
   */
  turn: Schema.optional(Schema.String)
}) {}

export class SessionHeader extends Schema.TaggedClass<SessionHeader>()("session", {
  version: Schema.Literal(1),
  id: Schema.String,
  createdAt: Schema.String,
  agent: Schema.String
}) {}

/** What kind of file a message carries, as sniffed from its bytes (src/media/sniff.ts), never from its name. */
export const AttachmentKind = Schema.Literal("image", "pdf", "audio", "text", "file")
export type AttachmentKind = typeof AttachmentKind.Type

/**
 * A file that came with a message (a photo, a PDF, a voice note, any file). The bytes are in the agent's media store
 * (`.kern/media/<sha256>`, src/media/MediaStore.ts) under `id`; a session holds this reference, never the bytes.
 * `text` is what kern read out of it for the model and recall: a PDF's text, a voice note's transcript, a text file's
 * content (each capped); `note` says what could not be done with it (no text layer, transcription failed).
 */
export class Attachment extends Schema.Class<Attachment>("Attachment")({
  /** The media store's id: `med_` and the first 24 hex digits of the bytes' sha256. */
  id: Schema.String.pipe(Schema.pattern(/^med_[0-9a-f]{24}$/)),
  /** The file's name as the sender gave it (shown, never used as a path). */
  name: Schema.String,
  /** The media type sniffed from the bytes (`image/jpeg`, `application/pdf`, `audio/ogg`, `text/plain`, …). */
  mediaType: Schema.String,
  kind: AttachmentKind,
  bytes: Schema.Number,
  width: Schema.optional(Schema.Number),
  height: Schema.optional(Schema.Number),
  pages: Schema.optional(Schema.Number),
  text: Schema.optional(Schema.String),
  note: Schema.optional(Schema.String)
}) {}

export class UserMessage extends Schema.TaggedClass<UserMessage>()("user", {
  text: Schema.String,
  /** Files that came with the message, by reference (Attachment). */
  attachments: Schema.optional(Schema.Array(Attachment)),
  envelope: Schema.optional(Envelope),
  /**
   * The message's id in kern.db's inbox, when it came through it: being in the session and being out of the inbox
   * are one fact, so a restart drops the inbox rows whose ids a session already holds (never answered twice).
   */
  inboxId: Schema.optional(Schema.Number),
  at: Schema.String
}) {}

export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  params: Schema.Unknown
})
export type ToolCall = typeof ToolCall.Type

export const Usage = Schema.Struct({
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  cachedInputTokens: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** Input tokens written to the provider's prompt cache (counted in inputTokens too). */
  cacheWriteTokens: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  costUsdCents: Schema.optionalWith(Schema.Number, { default: () => 0 })
})
export type Usage = typeof Usage.Type

export class AssistantMessage extends Schema.TaggedClass<AssistantMessage>()("assistant", {
  text: Schema.String,
  toolCalls: Schema.optionalWith(Schema.Array(ToolCall), { default: () => [] }),
  usage: Schema.optional(Usage),
  at: Schema.String
}) {}

export class ToolResultMessage extends Schema.TaggedClass<ToolResultMessage>()("tool", {
  toolCallId: Schema.String,
  toolName: Schema.String,
  isError: Schema.Boolean,
  result: Schema.Unknown,
  at: Schema.String
}) {}

/** A tool result or a call's arguments as text: a string as it is, anything else as JSON. */
export const valueText = (value: unknown): string => {
  if (typeof value === "string") return value
  const json = JSON.stringify(value)
  return json === undefined ? String(value) : json
}

/**
 * A turn ended without the model's answer: the provider failed, the watchdog fired, a budget cap or the step limit
 * was reached, or the operator stopped it. The failure is part of the conversation's record: GET /history shows it
 * after a reload, and the model is told the message before it was not answered (context/failedTurnNote.ts), so it
 * does not take that message for a new one on every later turn. Older kerns skip the line (an unknown tag).
 */
export class TurnFailedMessage extends Schema.TaggedClass<TurnFailedMessage>()("turn-failed", {
  /** The failure's `_tag`, as the turn's `error` event carries it: ProviderFailed, WatchdogFired, Stopped, … */
  failure: Schema.String,
  message: Schema.String,
  /** The turn that failed (its user message's `envelope.turn`). */
  turn: Schema.optional(Schema.String),
  at: Schema.String
}) {}

export const SessionMessage = Schema.Union(UserMessage, AssistantMessage, ToolResultMessage, TurnFailedMessage)
export type SessionMessage = typeof SessionMessage.Type

export const SessionLine = Schema.Union(SessionHeader, UserMessage, AssistantMessage, ToolResultMessage, TurnFailedMessage)
export type SessionLine = typeof SessionLine.Type
