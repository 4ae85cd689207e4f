import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Retention of `.kern/media/` (config `retention.media`): a pruned file keeps its row with `pruned_at_ms`, so asking
 * for it says it was pruned by retention, and when, instead of that it never existed. The same bytes stored again
 * bring it back (the row's `pruned_at_ms` cleared).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE media ADD COLUMN pruned_at_ms INTEGER`
  yield* sql`CREATE INDEX media_created ON media (created_at_ms) WHERE pruned_at_ms IS NULL`
})
