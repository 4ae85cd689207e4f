import { transaction } from "../storage/transaction.js"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { diskFullText, isDiskFull, storageProblem } from "../storage/diskFull.js"
import { Attachment } from "../session/messages.js"
import type { NewMessage } from "../turn/MessageQueue.js"

/** A message accepted by a channel and not yet recorded in a session. */
export class InboxEntry extends Schema.Class<InboxEntry>("InboxEntry")({
  id: Schema.Number,
  interface: Schema.String,
  channel: Schema.String,
  userId: Schema.String,
  text: Schema.String,
  /** Files that came with it, by reference to the media store. */
  attachments: Schema.optional(Schema.Array(Attachment)),
  receivedAtMs: Schema.Number
}) {}

/** An inbox row as kern.db holds it: the attachments as JSON text, null when the message has none. */
const InboxRow = Schema.Struct({
  ...InboxEntry.fields,
  attachments: Schema.NullishOr(Schema.parseJson(Schema.Array(Attachment)))
})
const entryOf = (row: typeof InboxRow.Type): InboxEntry => {
  const { attachments, ...rest } = row
  return new InboxEntry(attachments === null || attachments === undefined ? rest : { ...rest, attachments })
}

export class InboxError extends Schema.TaggedError<InboxError>()("InboxError", {
  message: Schema.String,
  /** Set when kern.db could not be written for want of space: the message was not accepted. */
  reason: Schema.optional(Schema.Literal("disk-full"))
}) {}

/** A channel's position in its peer's stream (a Telegram offset, the Slack envelopes taken), stored by key. */
export interface Cursor {
  readonly key: string
  readonly value: string
}

export interface InboxShape {
  /**
   * Stores the message; once this succeeds it survives a crash and is answered after a restart. With a cursor, the
   * cursor moves in the same transaction: the message is stored and the peer's stream is past it, or neither.
   */
  readonly add: (message: NewMessage, cursor?: Cursor) => Effect.Effect<InboxEntry, InboxError>
  /** A channel's stored position; none before its first message. */
  readonly cursor: (key: string) => Effect.Effect<Option.Option<string>, InboxError>
  /** Moves a cursor past what the channel took and did not queue (a stranger's message, a group's chatter). */
  readonly setCursor: (cursor: Cursor) => Effect.Effect<void, InboxError>
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
export class Inbox extends Context.Tag("kern/runtime/Inbox")<Inbox, InboxShape>() {}

const decodeRows = (rows: unknown) =>
  Effect.map(Schema.decodeUnknown(Schema.Array(InboxRow))(rows), (decoded) => decoded.map(entryOf))
const Count = Schema.Array(Schema.Struct({ n: Schema.Number }))
const CursorRows = Schema.Array(Schema.Struct({ value: Schema.String }))

export const makeSql = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const failed = (what: string) => (error: { readonly message: string }) =>
    isDiskFull(error)
      ? new InboxError({ reason: "disk-full", message: `could not ${what} the inbox in kern.db: ${diskFullText}` })
      : new InboxError({ message: `could not ${what} the inbox in kern.db: ${storageProblem(error)}` })

  const writeCursor = (cursor: Cursor, nowMs: number) =>
    sql`INSERT INTO channel_cursors ${sql.insert({ key: cursor.key, value: cursor.value, updatedAtMs: nowMs })}
      ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at_ms = excluded.updated_at_ms`

  const add = (message: NewMessage, cursor?: Cursor) =>
    Effect.gen(function*() {
      const receivedAtMs = yield* Clock.currentTimeMillis
      const rows = yield* sql`INSERT INTO inbox ${
        sql.insert({
          interface: message.interface,
          channel: message.channel,
          userId: message.userId,
          text: message.text,
          attachments: message.attachments === undefined || message.attachments.length === 0
            ? null
            : JSON.stringify(Schema.encodeSync(Schema.Array(Attachment))(message.attachments)),
          receivedAtMs
        })
      } RETURNING *`
      if (cursor !== undefined) yield* writeCursor(cursor, receivedAtMs)
      const [entry] = yield* decodeRows(rows)
      if (entry === undefined) return yield* new InboxError({ message: "the inbox did not return the stored message" })
      return entry
    }).pipe(transaction(sql), Effect.mapError(failed("write")), Effect.withSpan("kern.inbox.add"))

  const cursor = (key: string) =>
    sql`SELECT value FROM channel_cursors WHERE key = ${key}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(CursorRows)),
      Effect.map((rows) => Option.fromNullable(rows[0]?.value)),
      Effect.mapError(failed("read"))
    )

  const setCursor = (next: Cursor) =>
    Effect.flatMap(Clock.currentTimeMillis, (nowMs) => writeCursor(next, nowMs)).pipe(
      Effect.asVoid,
      Effect.mapError(failed("write"))
    )

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

  return Inbox.of({ add, cursor, setCursor, pending, remove, size })
})

/** The inbox in kern.db through SqlClient. */
export const layerSql: Layer.Layer<Inbox, never, SqlClient.SqlClient> = Layer.effect(Inbox, makeSql)
