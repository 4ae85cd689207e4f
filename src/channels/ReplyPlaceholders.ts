import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Schema } from "effect"

/** A chat message a channel posted for a turn and will replace with the turn's reply. */
export class Placeholder extends Schema.Class<Placeholder>("Placeholder")({
  interface: Schema.String,
  turnId: Schema.String,
  /** The chat (Telegram chat id, Slack target) the message is in. */
  channel: Schema.String,
  /** The channel's own id of the message (Telegram message_id, Slack ts). */
  messageId: Schema.String,
  postedAtMs: Schema.Number
}) {}

export class ReplyPlaceholderError extends Schema.TaggedError<ReplyPlaceholderError>()("ReplyPlaceholderError", {
  message: Schema.String
}) {}

export interface ReplyPlaceholdersShape {
  /** The placeholder is in the chat: until `settled`, a restart finds it (leftovers) and finishes it. */
  readonly posted: (placeholder: Omit<Placeholder, "postedAtMs">) => Effect.Effect<void, ReplyPlaceholderError>
  /** The turn's reply replaced the placeholder (or it was taken back): nothing is left to finish. */
  readonly settled: (iface: string, turnId: string) => Effect.Effect<void, ReplyPlaceholderError>
  /** The placeholders of `iface` that an earlier process posted and never settled, oldest first. */
  readonly leftovers: (iface: string) => Effect.Effect<ReadonlyArray<Placeholder>, ReplyPlaceholderError>
}

/**
 * The placeholders chat channels posted and have not yet replaced with a reply, in kern.db: a process killed mid-turn
 * leaves its rows, and the next start edits each placeholder once (channels/leftoverReplies.ts).
 */
export class ReplyPlaceholders extends Context.Tag("kern/channels/ReplyPlaceholders")<ReplyPlaceholders, ReplyPlaceholdersShape>() {}

const decodeRows = Schema.decodeUnknown(Schema.Array(Placeholder))

export const makeSql = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const failed = (what: string) => (error: { readonly message: string }) =>
    new ReplyPlaceholderError({ message: `could not ${what} the reply placeholders in kern.db: ${error.message}` })

  const posted = (placeholder: Omit<Placeholder, "postedAtMs">) =>
    Effect.flatMap(Clock.currentTimeMillis, (postedAtMs) =>
      sql`INSERT INTO reply_placeholders ${
        sql.insert({
          interface: placeholder.interface,
          turnId: placeholder.turnId,
          channel: placeholder.channel,
          messageId: placeholder.messageId,
          postedAtMs
        })
      } ON CONFLICT(interface, turn_id) DO UPDATE SET channel = excluded.channel, message_id = excluded.message_id`).pipe(
        Effect.asVoid,
        Effect.mapError(failed("write")),
        Effect.withSpan("kern.placeholders.posted")
      )

  const settled = (iface: string, turnId: string) =>
    sql`DELETE FROM reply_placeholders WHERE interface = ${iface} AND turn_id = ${turnId}`.pipe(
      Effect.asVoid,
      Effect.mapError(failed("write")),
      Effect.withSpan("kern.placeholders.settled")
    )

  const leftovers = (iface: string) =>
    sql`SELECT * FROM reply_placeholders WHERE interface = ${iface} ORDER BY posted_at_ms, turn_id`.pipe(
      Effect.flatMap(decodeRows),
      Effect.mapError(failed("read")),
      Effect.withSpan("kern.placeholders.leftovers")
    )

  return ReplyPlaceholders.of({ posted, settled, leftovers })
})

export const layerSql: Layer.Layer<ReplyPlaceholders, never, SqlClient.SqlClient> = Layer.effect(ReplyPlaceholders, makeSql)
