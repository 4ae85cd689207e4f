import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The approved contract itself beside its fingerprint (canonical JSON of the governed fields), so a mismatch can say
 * what changed: the description, the input schema, the safety class. Rows approved before have none.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE contract_baselines ADD COLUMN contract TEXT`
})
