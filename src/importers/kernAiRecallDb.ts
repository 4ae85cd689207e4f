/**
 * kern-ai's `.kern/recall.db` (src/memory.ts there): its `messages` table (`session_id, msg_index, role, content,
 * timestamp`) holds every indexed message with the time its envelope gave, `content` the message's string or its
 * parts as JSON. The import reads it for two things: the times of a session's messages, and the conversations whose
 * JSONL file is gone but whose messages the database still holds. Opened read-only on its own connection, with the
 * schema untrusted (`trusted_schema = OFF`): the file is the source's, so nothing in it runs and nothing is written.
 */
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Effect, Layer, Schema, type Scope } from "effect"

const Row = Schema.Struct({
  msg_index: Schema.Number,
  role: Schema.String,
  content: Schema.String,
  timestamp: Schema.NullOr(Schema.String)
})
export type RecallRow = typeof Row.Type

const Rows = Schema.Array(Row)
const Ids = Schema.Array(Schema.Struct({ session_id: Schema.String }))

export interface RecallDb {
  /** Every session the database holds messages of. */
  readonly sessionIds: ReadonlyArray<string>
  /** A session's messages in order (at most `limit`). */
  readonly rowsOf: (sessionId: string, limit: number) => Effect.Effect<ReadonlyArray<RecallRow>, string>
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** The database at `file`, open for the scope; fails with why it cannot be read. */
export const openRecallDb = (file: string): Effect.Effect<RecallDb, string, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      SqliteClient.layer({ filename: file, readonly: true, disableWAL: true }).pipe(
        Layer.catchAllCause((cause) => Layer.fail(Cause.squash(cause)))
      )
    ).pipe(Effect.mapError(describe))
    const sql = SqlClient.SqlClient.pipe(Effect.provide(context))
    const client = yield* sql
    yield* client`PRAGMA trusted_schema = OFF`.pipe(Effect.mapError(describe))
    yield* client`PRAGMA query_only = ON`.pipe(Effect.mapError(describe))
    const ids = yield* client`SELECT DISTINCT session_id FROM messages ORDER BY session_id`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Ids)),
      Effect.mapError(describe)
    )
    return {
      sessionIds: ids.map((row) => row.session_id),
      rowsOf: (sessionId, limit) =>
        client`SELECT msg_index, role, content, timestamp FROM messages WHERE session_id = ${sessionId} ORDER BY msg_index LIMIT ${limit}`
          .pipe(Effect.flatMap(Schema.decodeUnknown(Rows)), Effect.mapError(describe))
    } satisfies RecallDb
  }).pipe(Effect.withSpan("kern.import.kernAi.recallDb"))
