import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Channel users who asked to talk to the agent, and whom the operator approved. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS pairings (
    code TEXT PRIMARY KEY NOT NULL,
    interface TEXT NOT NULL,
    user_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    display_name TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved')),
    requested_at_ms INTEGER NOT NULL,
    approved_at_ms INTEGER,
    approved_by TEXT,
    UNIQUE (interface, user_id)
  )`
})
