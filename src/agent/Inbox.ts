import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import type { NewMessage } from "./MessageQueue.js"

/** A message accepted by a channel and not yet recorded in a session. */
export class InboxEntry extends Schema.Class<InboxEntry>("InboxEntry")({
  id: Schema.Number,
  interface: Schema.String,
  channel: Schema.String,
  userId: Schema.String,
  text: Schema.String,
  receivedAtMs: Schema.Number
}) {}

export class InboxError extends Schema.TaggedError<InboxError>()("InboxError", {
  message: Schema.String
}) {}

export interface InboxShape {
  /** Stores the message; once this succeeds it survives a crash and is answered after a restart. */
  readonly add: (message: NewMessage) => Effect.Effect<InboxEntry, InboxError>
  /** Every message not yet recorded, oldest first: what a starting runtime replays. */
  readonly pending: Effect.Effect<ReadonlyArray<InboxEntry>, InboxError>
  /** The message is in a session now: it leaves the inbox. */
  readonly remove: (id: number) => Effect.Effect<void, InboxError>
  readonly size: Effect.Effect<number, InboxError>
}

/**
 * The durable inbox every channel (HTTP, terminal, Telegram, Slack) puts messages in before they are queued: a
 * message leaves it only when its turn has appended it to the session, and a runtime starting replays what is left,
 * in order. Ids only grow: they are the turn ids clients follow.
 */
export class Inbox extends Context.Tag("kern/agent/Inbox")<Inbox, InboxShape>() {}

const decodeRows = Schema.decodeUnknown(Schema.Array(InboxEntry))
const Count = Schema.Array(Schema.Struct({ n: Schema.Number }))

export const makeSql = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const failed = (what: string) => (error: { readonly message: string }) =>
    new InboxError({ message: `could not ${what} the inbox in kern.db: ${error.message}` })

  const add = (message: NewMessage) =>
    Effect.gen(function*() {
      const receivedAtMs = yield* Clock.currentTimeMillis
      const rows = yield* sql`INSERT INTO inbox ${
        sql.insert({ interface: message.interface, channel: message.channel, userId: message.userId, text: message.text, receivedAtMs })
      } RETURNING *`
      const [entry] = yield* decodeRows(rows)
      if (entry === undefined) return yield* new InboxError({ message: "the inbox did not return the stored message" })
      return entry
    }).pipe(Effect.mapError(failed("write")), Effect.withSpan("kern.inbox.add"))

  const pending = sql`SELECT * FROM inbox ORDER BY id`.pipe(
    Effect.flatMap(decodeRows),
    Effect.mapError(failed("read")),
    Effect.withSpan("kern.inbox.pending")
  )

  const remove = (id: number) =>
    sql`DELETE FROM inbox WHERE id = ${id}`.pipe(Effect.asVoid, Effect.mapError(failed("write")), Effect.withSpan("kern.inbox.remove"))

  const size = sql`SELECT count(*) AS n FROM inbox`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Count)),
    Effect.map((rows) => rows[0]?.n ?? 0),
    Effect.mapError(failed("read"))
  )

  return Inbox.of({ add, pending, remove, size })
})

/** The inbox in kern.db through SqlClient. */
export const layerSql: Layer.Layer<Inbox, never, SqlClient.SqlClient> = Layer.effect(Inbox, makeSql)
