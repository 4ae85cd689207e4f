import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * SQLite's 1155_media_retention on PostgreSQL: a pruned media file keeps its row with `pruned_at_ms` (asking for it
 * says it was pruned, and when), and retention reads the live rows oldest first.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE media ADD COLUMN pruned_at_ms BIGINT`
  yield* sql`CREATE INDEX media_created ON media (created_at_ms) WHERE pruned_at_ms IS NULL`
})
