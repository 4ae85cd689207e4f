import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** SQLite's 1170_heartbeat_activity on PostgreSQL: whether something happened since the last heartbeat was sent. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE heartbeat_state ADD COLUMN pending_activity INTEGER NOT NULL DEFAULT 1`
})
