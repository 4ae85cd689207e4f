import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import core from "./migrations/0001_core.js"
import heartbeatActivity from "./migrations/0010_heartbeat_activity.js"
import mediaRetention from "./migrations/0030_media_retention.js"

/**
 * kern.db's migrations on PostgreSQL, keyed `<id>_<name>` as SQLite's are (their own ids: the two schemas are built
 * apart). `0001_core` is every table but recall's; recall's are `0002_recall`, from its own module, given by the layer
 * that knows it (src/runtime/agentDatabase.ts: storage does not import recall).
 */
export const pgMigrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_core": core,
  "0010_heartbeat_activity": heartbeatActivity,
  "0030_media_retention": mediaRetention
}

/** kern's migrations with recall's (src/recall/pg/schema.ts: its tables and pgvector when offered) as `0002_recall`. */
export const pgMigrationsWith = (
  recall: Effect.Effect<void, unknown, SqlClient.SqlClient>
): Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> => ({
  ...pgMigrations,
  "0002_recall": recall
})
