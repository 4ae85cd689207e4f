import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"

/** What kern knows of a session file without reading it: its count, and the file's size and mtime at that count. */
export class SessionRecord extends Schema.Class<SessionRecord>("SessionRecord")({
  sessionId: Schema.String,
  createdAt: Schema.String,
  messages: Schema.Number,
  bytes: Schema.Number,
  mtimeMs: Schema.Number
}) {}

export class SessionIndexError extends Schema.TaggedError<SessionIndexError>()("SessionIndexError", {
  message: Schema.String
}) {}

export interface SessionIndexShape {
  readonly all: Effect.Effect<ReadonlyArray<SessionRecord>, SessionIndexError>
  readonly put: (record: SessionRecord) => Effect.Effect<void, SessionIndexError>
  readonly remove: (sessionId: string) => Effect.Effect<void, SessionIndexError>
}

/** The session index (kern.db `sessions`): counts for `kern sessions list` and status without parsing any file. */
export class SessionIndex extends Context.Tag("kern/session/SessionIndex")<SessionIndex, SessionIndexShape>() {}

const decodeRows = Schema.decodeUnknown(Schema.Array(SessionRecord))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const failed = (what: string) => (error: { readonly message: string }) =>
    new SessionIndexError({ message: `could not ${what} the session index in kern.db: ${error.message}` })

  const all = sql`SELECT * FROM sessions ORDER BY session_id`.pipe(
    Effect.flatMap(decodeRows),
    Effect.mapError(failed("read")),
    Effect.withSpan("kern.session.index.all")
  )

  const put = (record: SessionRecord) =>
    sql`INSERT INTO sessions ${sql.insert({ ...record })}
      ON CONFLICT (session_id) DO UPDATE SET created_at = excluded.created_at, messages = excluded.messages,
      bytes = excluded.bytes, mtime_ms = excluded.mtime_ms`.pipe(
      Effect.asVoid,
      Effect.mapError(failed("write")),
      Effect.withSpan("kern.session.index.put")
    )

  const remove = (sessionId: string) =>
    sql`DELETE FROM sessions WHERE session_id = ${sessionId}`.pipe(
      Effect.asVoid,
      Effect.mapError(failed("write")),
      Effect.withSpan("kern.session.index.remove")
    )

  return SessionIndex.of({ all, put, remove })
})

/** The index in kern.db through SqlClient. */
export const layerSql: Layer.Layer<SessionIndex, never, SqlClient.SqlClient> = Layer.effect(SessionIndex, make)
