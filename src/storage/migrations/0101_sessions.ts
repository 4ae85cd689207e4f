import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The session index: one row per session file with its message count, kept up to date on every append, and the
 * file's size and mtime when the row was last right, so a file changed behind kern's back is seen and re-read.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY NOT NULL,
    created_at TEXT NOT NULL,
    messages INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    mtime_ms REAL NOT NULL
  )`
})
