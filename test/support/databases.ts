import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Random, Redacted } from "effect"
import { inject } from "vitest"
import type { DatabaseError } from "../../src/storage/Database.js"
import * as Database from "../../src/storage/Database.js"
import * as PgDatabase from "../../src/storage/pg/PgDatabase.js"
import { agentPgMigrations } from "../../src/runtime/agentDatabase.js"
import { pgMigrations } from "../../src/storage/pg/migrations.js"

export type DialectName = "sqlite" | "postgres"

export interface TestDatabase {
  readonly dialect: DialectName
  /** A new, empty, migrated kern.db each time it is provided: an in-memory SQLite, or a schema of its own on the run's PostgreSQL. */
  readonly layer: Layer.Layer<SqlClient.SqlClient, DatabaseError>
}

/**
 * A schema of its own on the run's PostgreSQL server (test/support/postgresSetup.ts), dropped when the layer closes:
 * kern's PostgreSQL migrations applied, as an agent's would be.
 */
export const postgresLayerWith = (
  migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
): Layer.Layer<SqlClient.SqlClient, DatabaseError> => Layer.unwrapScoped(
  Effect.gen(function*() {
    const url = inject("postgresUrl")
    // Unique across the run's parallel files: the process's high-resolution time and a random number.
    const schema = `t_${(yield* Effect.sync(() => process.hrtime.bigint())).toString(36)}_${yield* Random.nextIntBetween(0, 1_000_000)}`
    const layer = PgDatabase.layer({ url: Redacted.make(url), shown: url, schema, migrations, maxConnections: 4 })
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(PgClient.PgClient, (sql) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
        Effect.orDie
      )
    )
    return layer
  })
)

export const postgresLayer: Layer.Layer<SqlClient.SqlClient, DatabaseError> = postgresLayerWith(pgMigrations)

export const sqlite: TestDatabase = { dialect: "sqlite", layer: Database.layerMemory }
export const postgres: TestDatabase = { dialect: "postgres", layer: postgresLayer }

/** The databases the repository tests run on: `describe.each(databases)("… on $dialect", ({ layer }) => …)`. */
export const databases: ReadonlyArray<TestDatabase> = [sqlite, postgres]

/** As `databases`, with every table a running agent has: recall's too (its PostgreSQL tables are recall's own migration). */
export const agentDatabases: ReadonlyArray<TestDatabase> = [
  sqlite,
  { dialect: "postgres", layer: postgresLayerWith(agentPgMigrations) }
]

/**
 * An agent folder's `database` config on `dialect`, for tests that build a whole agent from its folder: none (its
 * `.kern/kern.db`), or a new schema on the run's PostgreSQL (left to the server, which the run throws away).
 */
export const agentConfigOn = (dialect: DialectName): Record<string, unknown> =>
  dialect === "sqlite"
    ? {}
    : { database: { url: inject("postgresUrl"), schema: `a_${process.hrtime.bigint().toString(36)}_${Math.floor(Math.random() * 1_000_000)}` } }
