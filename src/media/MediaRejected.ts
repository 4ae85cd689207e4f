import { Schema } from "effect"

/**
 * A file kern would not take: too large, empty, or not stored. `message` is said to the sender as it is (a chat reply,
 * an HTTP 4xx, `kern chat`'s error), naming the file and the limit.
 */
export class MediaRejected extends Schema.TaggedError<MediaRejected>()("MediaRejected", {
  reason: Schema.Literal("too-large", "turn-too-large", "empty", "not-stored", "unreadable"),
  message: Schema.String
}) {}

/** A media id the store does not hold (never stored, or pruned: then when, and the message says so with the date). */
export class MediaNotFound extends Schema.TaggedError<MediaNotFound>()("MediaNotFound", {
  id: Schema.String,
  message: Schema.String,
  prunedAtMs: Schema.optional(Schema.Number)
}) {}

/** How a file retention pruned is said wherever it is asked for: `pruned by retention on 2026-11-27`. */
export const prunedText = (prunedAtMs: number) => `pruned by retention on ${new Date(prunedAtMs).toISOString().slice(0, 10)}`
