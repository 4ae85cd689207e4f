import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Random, Redacted, type Scope } from "effect"
import * as NodePath from "node:path"
import { inject } from "vitest"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import * as AgentDatabase from "../../src/runtime/agentDatabase.js"
import type { DatabaseError } from "../../src/storage/Database.js"
import * as Database from "../../src/storage/Database.js"
import * as PgDatabase from "../../src/storage/pg/PgDatabase.js"
import { agentPgMigrations } from "../../src/runtime/agentDatabase.js"
import { pgMigrations } from "../../src/storage/pg/migrations.js"
import { makeTempDir } from "./tempDir.js"

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

/** A schema of its own on the run's PostgreSQL server, dropped when the scope closes. */
const scopedSchema: Effect.Effect<{ readonly url: string; readonly schema: string }, never, Scope.Scope> = Effect.gen(function*() {
  const url = inject("postgresUrl")
  const schema = `t_${(yield* Effect.sync(() => process.hrtime.bigint())).toString(36)}_${yield* Random.nextIntBetween(0, 1_000_000)}`
  yield* Effect.addFinalizer(() =>
    Effect.flatMap(PgClient.PgClient, (sql) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
      Effect.orDie
    )
  )
  return { url, schema }
})

/**
 * A kern.db that outlives the layers opened on it, as an agent's outlives a restart: every layer built from the one
 * this gives reaches the same tables (SQLite: a file in a temp folder; PostgreSQL: one schema, dropped with the scope).
 */
export const reopenable = (
  database: TestDatabase
): Effect.Effect<Layer.Layer<SqlClient.SqlClient, DatabaseError>, never, Scope.Scope> =>
  database.dialect === "sqlite"
    ? Effect.sync(() => Database.layer({ filename: NodePath.join(makeTempDir("kern-db-"), "kern.db") }))
    : Effect.map(scopedSchema, ({ schema, url }) =>
      PgDatabase.layer({ url: Redacted.make(url), shown: url, schema, migrations: pgMigrations, maxConnections: 4 }))

/**
 * What an agent folder's config takes to keep its kern.db on `database`: nothing on SQLite (`.kern/kern.db`), a
 * `database: { url, schema }` on PostgreSQL (a schema of its own, dropped with the scope). Read by the agent's own
 * layers, as a real agent's config is.
 */
export const agentDatabaseConfig = (
  database: TestDatabase
): Effect.Effect<{ readonly database?: { readonly url: string; readonly schema: string } }, never, Scope.Scope> =>
  database.dialect === "sqlite" ? Effect.succeed({}) : Effect.map(scopedSchema, (database) => ({ database }))

/**
 * The SqlClient of an agent folder's kern.db where its config puts it (`.kern/kern.db`, or its schema on PostgreSQL),
 * as the agent's own commands open it: what a test reads or seeds beside the running agent.
 */
export const agentSql = (dir: string): Layer.Layer<SqlClient.SqlClient, unknown> =>
  AgentDatabase.layerAsIs.pipe(
    Layer.provide(AgentConfig.layer(dir)),
    Layer.provide(Layer.merge(NodeFileSystem.layer, Layer.succeed(ProcessEnv, {})))
  )
