import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * When the heartbeat's next tick is due, kept while no runtime runs (next_at_ms is what `kern status` shows of a
 * running one): a restart keeps the interval, and a tick missed while the agent was down fires once at the start.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE heartbeat_state ADD COLUMN due_at_ms INTEGER`
})
