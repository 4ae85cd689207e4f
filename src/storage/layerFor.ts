import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { DatabaseTarget } from "../config/database.js"
import * as Database from "./Database.js"

/**
 * kern.db's SqlClient where the config puts it: SQLite's file (the default), or the agent's schema on PostgreSQL with
 * `pgMigrations` applied (kern's own when not given). The PostgreSQL client (pg, @effect/sql-pg) is imported only
 * when it is used: an SQLite agent's start and `kern status` never load it.
 */
export const layerFor = (
  target: DatabaseTarget,
  pgMigrations?: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
): Layer.Layer<SqlClient.SqlClient, Database.DatabaseError> =>
  target._tag === "sqlite"
    ? Database.layer({ filename: target.file })
    : Layer.unwrapEffect(
      Effect.map(
        Effect.promise(() => import("./pg/PgDatabase.js")),
        (PgDatabase) => PgDatabase.layer({ url: target.url, shown: target.shown, schema: target.schema, migrations: pgMigrations })
      )
    )
