import { Migrator, type SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Layer, Redacted, String as Str } from "effect"
import * as PgTypes from "pg-types"
import { shownUrl } from "../../config/database.js"
import { DatabaseError, describeCause } from "../Database.js"
import { withMigrationLock } from "./migrationLock.js"
import { pgMigrations } from "./migrations.js"

export interface PostgresOptions {
  /** The server's URL, password and all. */
  readonly url: Redacted.Redacted
  /** The URL errors name (its password, if any, taken out). */
  readonly shown: string
  /** The schema the agent's tables live in, created if absent. */
  readonly schema: string
  /** Migrations to run instead of kern's own. */
  readonly migrations?: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> | undefined
  readonly maxConnections?: number | undefined
}

/**
 * A 64-bit integer or numeric as a number when a number holds it exactly, else as pg's text. kern's own integers
 * (counts, sizes, millisecond times, row ids) are far below 2^53 and the repositories decode numbers, as SQLite gives
 * them; the cluster's journal ids are 64-bit snowflakes, which it reads as text (`String(row.id)`): a rounded number
 * would name another message.
 */
export const bigintOrText = (value: string): number | string => {
  const number = Number(value)
  return Number.isSafeInteger(number) || (!Number.isInteger(number) && Number.isFinite(number)) ? number : value
}

const types = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    (oid === 20 || oid === 1700) && format !== "binary"
      ? bigintOrText
      : format === "binary"
      ? PgTypes.getTypeParser(oid, "binary")
      : PgTypes.getTypeParser(oid, "text")
}

/**
 * The URL with `search_path` set to the schema at every connection (libpq's `options`), then `public`, where
 * extensions shared by every agent on the server live (pgvector's `vector` type: src/recall/pg/schema.ts).
 */
const withSearchPath = (url: string, schema: string): string => {
  const parsed = new URL(url)
  parsed.searchParams.set("options", `-c search_path=${schema},public`)
  return parsed.toString()
}

const runMigrations = Migrator.make({})

/**
 * SqlClient over a PostgreSQL server, every statement in `schema` (created if absent; two agents on one server stay
 * apart), kern's PostgreSQL migrations applied. A refused connection, a failed login or a failed migration is a
 * DatabaseError naming the server (never its password).
 */
export const layer = (options: PostgresOptions): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, DatabaseError> => {
  const fail = failWith(options)
  const prepare = Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    // The schema and the Migrator's table, one process at a time: runners starting together raced to create them. The
    // migrations then run under the Migrator's own lock of its table (its lookup of the table would abort a
    // transaction of ours, so it runs outside).
    yield* withMigrationLock(sql, options.schema)(Effect.zipRight(
      sql`CREATE SCHEMA IF NOT EXISTS ${sql(options.schema)}`,
      sql`CREATE TABLE IF NOT EXISTS ${sql(options.schema)}.kern_migrations (
        migration_id integer primary key,
        created_at timestamp with time zone not null default now(),
        name text not null
      )`
    )).pipe(Effect.mapError(fail("open")))
    yield* runMigrations({ loader: Migrator.fromRecord(options.migrations ?? pgMigrations), table: "kern_migrations" })
      .pipe(Effect.mapError(fail("migrate")))
  }).pipe(Effect.withSpan("kern.storage.preparePostgres"))
  return Layer.effectDiscard(prepare).pipe(Layer.provideMerge(client(options)))
}

const failWith = (options: Pick<PostgresOptions, "shown" | "schema">) => (operation: DatabaseError["operation"]) => (error: unknown) =>
  new DatabaseError({ file: `${shownUrl(options.shown)} (schema ${options.schema})`, operation, detail: describeCause(error) })

/** The client alone, every statement in the schema: nothing created or migrated (kern doctor reads through it). */
export const client = (options: PostgresOptions): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, DatabaseError> =>
  PgClient.layer({
    url: Redacted.make(withSearchPath(Redacted.value(options.url), options.schema)),
    applicationName: "kern",
    maxConnections: options.maxConnections ?? 8,
    types,
    transformResultNames: Str.snakeToCamel,
    transformQueryNames: Str.camelToSnake
  }).pipe(Layer.catchAllCause((cause) => Layer.fail(failWith(options)("open")(Cause.squash(cause)))))

/** The SqlClient a PostgreSQL layer provides. */
export const sqlClient = Effect.map(PgClient.PgClient, (sql): SqlClient.SqlClient => sql)
