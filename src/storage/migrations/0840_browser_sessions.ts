import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The web UI's logged-in browsers, kept across restarts of the agent. Only a hash of the session secret is stored:
 * whoever reads kern.db learns nothing they could present as a cookie.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS browser_sessions (
    secret_hash TEXT PRIMARY KEY,
    created_at_ms INTEGER NOT NULL,
    last_seen_at_ms INTEGER NOT NULL
  )`
})
