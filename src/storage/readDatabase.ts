import type { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Schema, String as Str } from "effect"
import { freshSchemaMigrations } from "./freshSchema.js"

/** The id of the newest migration kern has (freshSchema.ts lists them all; test/storage/freshSchema.test.ts holds it so). */
const newestMigration = Math.max(0, ...freshSchemaMigrations.map((name) => Number.parseInt(name, 10)).filter(Number.isFinite))

/** kern.db is not one `layerToRead` reads as it is (the caller opens it with Database.layer instead). */
export class NotReadableAsIs extends Schema.TaggedError<NotReadableAsIs>()("NotReadableAsIs", { file: Schema.String }) {}

/**
 * kern.db opened only to read it, as `kern status` does (src/channels/web/statusStored.ts): read-only, with the busy timeout,
 * and none of what Database.layer does for a process that writes (the migrator and its modules, sqlite-vec, the
 * pragmas, the files' modes), which cost `kern status` more than its reads. Fails (NotReadableAsIs) when kern.db is not one this
 * kern reads as it is: not openable read-only, not an SQLite database, or behind the newest migration; the caller then
 * opens it with Database.layer, which migrates it or names what is wrong, as it always did.
 */
export const layerToRead = (file: string): Layer.Layer<SqlClient.SqlClient, NotReadableAsIs> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const client = yield* Layer.build(SqliteClient.layer({
      filename: file,
      readonly: true,
      // Read-only: the journal mode is the file's (WAL, set by the process that made it), not changed here.
      disableWAL: true,
      transformResultNames: Str.snakeToCamel,
      transformQueryNames: Str.camelToSnake
    }))
    const sql = SqliteClient.SqliteClient.pipe(Effect.provide(client))
    const applied = yield* Effect.flatMap(sql, (sql) =>
      Effect.zipRight(
        sql`PRAGMA busy_timeout = 5000`,
        sql<{ readonly newest: number | null }>`SELECT max(migration_id) AS newest FROM kern_migrations`
      ))
    if ((applied[0]?.newest ?? 0) < newestMigration) return yield* new NotReadableAsIs({ file })
    return Layer.succeedContext(client)
  }).pipe(Effect.catchAllCause(() => new NotReadableAsIs({ file }))))
