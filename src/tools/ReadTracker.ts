import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { toolFailure } from "../kernel/ToolFailure.js"
import { FileSnapshot } from "../storage/fileSnapshot.js"

const Key = Schema.Struct({ sessionId: Schema.String, path: Schema.String })

/**
 * Per session, the files the model has read (or written) and what they held then, so write and edit can refuse
 * to overwrite a file the model has not seen or that changed on disk since. Kept in kern.db (`tool_reads`), so
 * it belongs to the session, not the process: the next `kern chat` on a session knows what the last one read.
 */
export class ReadTracker extends Effect.Service<ReadTracker>()("kern/tools/ReadTracker", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storage = (error: { readonly message: string }) =>
      toolFailure("UNEXPECTED", `kern.db: the record of files read could not be used: ${error.message}`)

    const find = SqlSchema.findOne({
      Request: Key,
      Result: FileSnapshot,
      execute: (key) => sql`SELECT size, sha256 FROM tool_reads WHERE session_id = ${key.sessionId} AND path = ${key.path}`
    })

    return {
      record: (sessionId: string, path: string, snapshot: FileSnapshot) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          sql`INSERT INTO tool_reads (session_id, path, size, sha256, recorded_at_ms)
            VALUES (${sessionId}, ${path}, ${snapshot.size}, ${snapshot.sha256}, ${now})
            ON CONFLICT (session_id, path) DO UPDATE SET
              size = excluded.size, sha256 = excluded.sha256, recorded_at_ms = excluded.recorded_at_ms`).pipe(
            Effect.asVoid,
            Effect.mapError(storage),
            Effect.withSpan("kern.tools.ReadTracker.record")
          ),
      lookup: (sessionId: string, path: string) =>
        find({ sessionId, path }).pipe(
          Effect.map(Option.getOrUndefined),
          Effect.mapError(storage),
          Effect.withSpan("kern.tools.ReadTracker.lookup")
        ),
      forgetSession: (sessionId: string) =>
        sql`DELETE FROM tool_reads WHERE session_id = ${sessionId}`.pipe(
          Effect.asVoid,
          Effect.mapError(storage),
          Effect.withSpan("kern.tools.ReadTracker.forgetSession")
        )
    } as const
  })
}) {}
