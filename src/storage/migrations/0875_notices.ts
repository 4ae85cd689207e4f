import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Notices the agent gives its operator once (an upgrade's consequence), by key, with when they were given. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE notices (key TEXT PRIMARY KEY, given_at_ms INTEGER NOT NULL)`
})
