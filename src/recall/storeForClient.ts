import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import * as RecallStorePostgres from "./pg/RecallStorePostgres.js"
import { RecallStore } from "./RecallStore.js"
import * as RecallStoreSqlite from "./RecallStoreSqlite.js"

/**
 * The recall store for the database kern.db's client talks to: PostgreSQL's (tsvector, pgvector) when it is a
 * PgClient (config `database.url`), else SQLite's (FTS5, sqlite-vec). The one place the choice is made.
 */
export const make = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.onDialectOrElse({
    pg: () => RecallStorePostgres.make,
    orElse: () => RecallStoreSqlite.make
  }))

export const layer: Layer.Layer<RecallStore, never, SqlClient.SqlClient> = Layer.effect(RecallStore, make)
