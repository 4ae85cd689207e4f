import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What each session has read (or written) of each file, so read-before-write holds across processes: a file read
 * in one `kern chat` can be edited by the next on the same session, and a change on disk since is still refused.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS tool_reads (
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    PRIMARY KEY (session_id, path)
  ) WITHOUT ROWID`
})
