import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Whether something happened since the last heartbeat was sent (a message arrived), kept in kern.db: a runtime that
 * starts (an agent a host woke for its heartbeat) knows whether the last heartbeat already saw everything, and skips
 * the model call if so. 1 for the rows that exist: what the last process saw is not known, so the next heartbeat runs.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE heartbeat_state ADD COLUMN pending_activity INTEGER NOT NULL DEFAULT 1`
})
