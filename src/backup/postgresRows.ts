import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import * as NodeFs from "node:fs"
import type { DatabaseTarget } from "../config/database.js"
import { recallMigration } from "../recall/pg/schema.js"
import * as Database from "../storage/Database.js"
import { describeCause } from "../storage/Database.js"
import { layerFor } from "../storage/layerFor.js"
import { pgMigrationsWith } from "../storage/pg/migrations.js"
import { BackupError } from "./BackupError.js"
import { type CopiedRows, copyRows, pinnedTransaction, unpinned } from "./copyRows.js"

// An agent whose kern.db is on PostgreSQL (config `database`) is backed up as any other: its rows go into an SQLite
// kern.db in the archive, which `kern backup verify` checks and `kern restore` loads back, into SQLite or PostgreSQL.

type PostgresTarget = Extract<DatabaseTarget, { readonly _tag: "postgres" }>

/** Where a schema is named in messages: never the password. */
export const schemaText = (target: PostgresTarget): string => `schema ${target.schema} on ${target.shown}`

const failed = (what: string) => (error: unknown) => new BackupError({ reason: "database", message: `${what}: ${describeCause(error)}` })

const clientOf = <E>(layer: Layer.Layer<SqlClient.SqlClient, E>) =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, SqlClient.SqlClient))

/** The agent's schema as kern opens it: its migrations and recall's applied. */
const schemaLayer = (target: PostgresTarget) => layerFor(target, pgMigrationsWith(recallMigration))

/**
 * The rows of the agent's schema into a new SQLite kern.db at `file`, from one snapshot (a REPEATABLE READ
 * transaction: a running agent goes on writing, the copy is the schema as it was at one moment).
 */
export const exportFromPostgres = (target: PostgresTarget, file: string): Effect.Effect<CopiedRows, BackupError> =>
  Effect.scoped(Effect.gen(function*() {
    const from = yield* clientOf(schemaLayer(target))
    const to = yield* clientOf(Database.layer({ filename: file }))
    const copied = yield* pinnedTransaction(from, (onFrom) =>
      Effect.zipRight(
        onFrom(from`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`),
        pinnedTransaction(to, (onTo) =>
          Effect.zipRight(onTo(to`PRAGMA defer_foreign_keys = ON`), copyRows(from, to, { from: onFrom, to: onTo })))
      ))
    // One file, nothing beside it: the archive takes kern.db alone.
    yield* to`PRAGMA journal_mode = DELETE`
    return copied
  })).pipe(Effect.mapError(failed(`could not copy kern.db from ${schemaText(target)}`)), Effect.withSpan("kern.backup.exportFromPostgres"))

const Count = Schema.Struct({ n: Schema.Number })
const Named = Schema.Struct({ tableName: Schema.String, name: Schema.String })

/**
 * An archive's SQLite kern.db (`file`, brought to this kern's schema by its migrations) into the agent's schema,
 * which must hold no tables yet (restore never mixes two agents' rows), in one transaction; then the file is removed:
 * the restored agent's kern.db is the schema. Identity columns go on after the largest id restored.
 */
export const importIntoPostgres = (file: string, target: PostgresTarget): Effect.Effect<CopiedRows, BackupError> =>
  Effect.scoped(Effect.gen(function*() {
    const existing = yield* Effect.scoped(Effect.flatMap(clientOf(emptyCheckLayer(target)), (sql) =>
      SqlSchema.single({
        Request: Schema.String,
        Result: Count,
        execute: (schema) => sql`SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = ${schema}`
      })(target.schema)))
    if (existing.n > 0) {
      return yield* new BackupError({
        reason: "in-the-way",
        message: `${schemaText(target)} already holds ${existing.n} tables (the agent that was backed up, or another): restore ` +
          "never mixes two agents' rows. Drop that schema if it is the lost agent's, or restore without database in the " +
          "config (kern.db stays an SQLite file) and set database.schema to a new schema later"
      })
    }
    const from = yield* clientOf(Database.layer({ filename: file }))
    const to = yield* clientOf(schemaLayer(target))
    // Rows are copied table by table: a reference to a row of a table not yet copied is checked at the commit.
    const foreignKeys = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: Named,
      execute: () =>
        to`SELECT table_name, constraint_name AS name FROM information_schema.table_constraints
          WHERE constraint_schema = current_schema() AND constraint_type = 'FOREIGN KEY'`
    })(undefined)
    for (const key of foreignKeys) yield* to.unsafe(`ALTER TABLE "${key.tableName}" ALTER CONSTRAINT "${key.name}" DEFERRABLE`)
    const identities = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: Named,
      execute: () =>
        to`SELECT table_name, column_name AS name FROM information_schema.columns
          WHERE table_schema = current_schema() AND is_identity = 'YES'`
    })(undefined)
    const copied = yield* pinnedTransaction(to, (onTo) => Effect.gen(function*() {
      yield* to`SET CONSTRAINTS ALL DEFERRED`
      const copied = yield* copyRows(from, to, { from: unpinned, to: onTo })
      for (const { name, tableName } of identities) {
        yield* to.unsafe(
          `SELECT setval(pg_get_serial_sequence('"${tableName}"', '${name}'), coalesce((SELECT max("${name}") FROM "${tableName}"), 0) + 1, false)`
        )
      }
      return copied
    }))
    yield* Effect.sync(() => {
      for (const path of [file, `${file}-wal`, `${file}-shm`]) NodeFs.rmSync(path, { force: true })
    })
    return copied
  })).pipe(
    Effect.mapError((error) => error instanceof BackupError ? error : failed(`could not load kern.db into ${schemaText(target)}`)(error)),
    Effect.withSpan("kern.backup.importIntoPostgres")
  )

/** The server, to ask what the schema holds, without creating it. */
const emptyCheckLayer = (target: PostgresTarget): Layer.Layer<SqlClient.SqlClient, unknown> =>
  Layer.unwrapEffect(
    Effect.map(Effect.promise(() => import("../storage/pg/PgDatabase.js")), (PgDatabase) =>
      PgDatabase.client({ url: target.url, shown: target.shown, schema: target.schema, maxConnections: 1 }))
  )
