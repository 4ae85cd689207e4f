import { FileSystem } from "@effect/platform"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orIfMissing } from "./missingFile.js"

const SchemaBytes = Schema.Struct({ bytes: Schema.NumberFromString })

/**
 * How many bytes the agent's kern.db takes: on SQLite its file and WAL (`dbFile`, none while missing); on PostgreSQL
 * its schema (every table of the connection's current schema with its indexes and TOAST, pg_total_relation_size),
 * since there is no file of its own there.
 */
export const databaseBytes = (dbFile: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fs = yield* FileSystem.FileSystem
    const size = (file: string) => fs.stat(file).pipe(Effect.map((info) => Number(info.size)), orIfMissing(() => 0))
    return yield* sql.onDialectOrElse({
      pg: () =>
        SqlSchema.single({
          Request: Schema.Void,
          Result: SchemaBytes,
          execute: () =>
            sql`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS bytes
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')`
        })(undefined).pipe(Effect.map((row) => row.bytes)),
      orElse: () => Effect.map(Effect.all([size(dbFile), size(`${dbFile}-wal`)]), ([db, wal]) => db + wal)
    })
  }).pipe(Effect.withSpan("kern.storage.databaseBytes"))
