import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * How far a paired user's file tools reach in their own conversations: `shared` (the agent folder's shared/ only, the
 * default, also for every user paired before) or `all` (the whole folder, as the operator's).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE pairings ADD COLUMN memory TEXT NOT NULL DEFAULT 'shared' CHECK (memory IN ('shared', 'all'))`
})
