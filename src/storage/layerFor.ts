import type { SqlClient } from "@effect/sql"
import type { Effect, Layer } from "effect"
import type { DatabaseTarget } from "../config/database.js"
import * as Database from "./Database.js"
import * as PgDatabase from "./pg/PgDatabase.js"

/**
 * kern.db's SqlClient where the config puts it: SQLite's file (the default), or the agent's schema on PostgreSQL with
 * `pgMigrations` applied (kern's own when not given).
 */
export const layerFor = (
  target: DatabaseTarget,
  pgMigrations?: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
): Layer.Layer<SqlClient.SqlClient, Database.DatabaseError> =>
  target._tag === "sqlite"
    ? Database.layer({ filename: target.file })
    : PgDatabase.layer({ url: target.url, shown: target.shown, schema: target.schema, migrations: pgMigrations })
