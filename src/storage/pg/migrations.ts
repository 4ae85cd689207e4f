import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import core from "./migrations/0001_core.js"

/** Statements run in order as one migration (another module's DDL). */
export const statementsMigration = (statements: ReadonlyArray<string>): Effect.Effect<void, unknown, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const statement of statements) yield* sql.unsafe(statement)
  })

/**
 * kern.db's migrations on PostgreSQL, keyed `<id>_<name>` as SQLite's are (their own ids: the two schemas are built
 * apart). `0001_core` is every table but recall's; recall's are `0002_recall`, from its own module, given by the layer
 * that knows it (src/runtime/agentDatabase.ts: storage does not import recall).
 */
export const pgMigrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_core": core
}

/** kern's migrations with recall's DDL (src/recall/pg/schema.ts) as `0002_recall`. */
export const pgMigrationsWith = (recall: ReadonlyArray<string>): Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> => ({
  ...pgMigrations,
  "0002_recall": statementsMigration(recall)
})
