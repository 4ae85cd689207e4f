import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The heartbeat's last tick (what it did and why) and when the next one is due: what `kern status` shows. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS heartbeat_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_at_ms INTEGER,
    outcome TEXT CHECK (outcome IS NULL OR outcome IN ('ran', 'skipped', 'failed')),
    reason TEXT NOT NULL DEFAULT '',
    next_at_ms INTEGER
  )`
})
