import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Paired channel users become users: a role (operator or user), a tool scope of their own (NULL: the role's
 * default) and an expiry for a pending code. Rows that exist keep their status; their codes get no expiry.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE pairings ADD COLUMN role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('operator', 'user'))`
  yield* sql`ALTER TABLE pairings ADD COLUMN tool_scope TEXT CHECK (tool_scope IS NULL OR tool_scope IN ('read', 'write', 'full'))`
  yield* sql`ALTER TABLE pairings ADD COLUMN expires_at_ms INTEGER`
})
