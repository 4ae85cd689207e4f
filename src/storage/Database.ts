import { Migrator, SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Effect, Layer, Schema, String as Str } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { createFreshFile } from "./freshFile.js"
import { freshSchemaMigrations, freshSchemaStatements } from "./freshSchema.js"
import { migrations as allMigrations } from "./migrations.js"
import { privateDirMode, privateFileMode } from "./privateFiles.js"
import { loadVectorExtension } from "./vectorExtension.js"

/** kern.db could not be opened, prepared or migrated. */
export class DatabaseError extends Schema.TaggedError<DatabaseError>()("DatabaseError", {
  file: Schema.String,
  operation: Schema.Literal("open", "extension", "migrate"),
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.file}: could not ${this.operation === "extension" ? "load sqlite-vec" : this.operation} the database: ${this.detail}`
  }
}

export interface DatabaseOptions {
  readonly filename: string
  /** Migrations to run instead of kern's own (tests of the migrator). */
  readonly migrations?: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
}

/** What went wrong, from an SqlError's cause or any error. */
export const describeCause = (error: unknown): string =>
  typeof error === "object" && error !== null && "cause" in error && error.cause instanceof Error
    ? error.cause.message
    : error instanceof Error
    ? error.message
    : String(error)

const runMigrations = Migrator.make({})

/** The id of a migration record's newest entry (`0500_channel_cursors` is 500). */
export const newestId = (migrations: Record<string, unknown>): number =>
  Math.max(0, ...Object.keys(migrations).map((key) => Number.parseInt(key, 10)).filter(Number.isFinite))

const AppliedRows = Schema.Array(Schema.Struct({ newest: Schema.NullOr(Schema.Number) }))

/** Whether the snapshot in freshSchema.ts is the schema of exactly these migrations (scripts/freshSchema.ts). */
const snapshotCovers = (migrations: Record<string, unknown>): boolean => {
  const names = Object.keys(migrations).sort()
  return names.length === freshSchemaMigrations.length && names.every((name, i) => name === freshSchemaMigrations[i])
}

/**
 * A new kern.db gets the schema its migrations would leave in one transaction, from the snapshot, and every
 * migration recorded as applied: run one by one, they cost a first open (a new agent, or kern.db lost) about 80 ms
 * of a cold process. Succeeds with false, changing nothing, when the database is not empty (another process made it
 * meanwhile: BEGIN IMMEDIATE waits for its write); any failure rolls back and the migrator decides. A new file has
 * the snapshot already (freshFile.ts, cheaper still): this is for an in-memory database, and for a file that one
 * could not create.
 */
const createFromSnapshot = (sql: SqlClient.SqlClient): Effect.Effect<boolean> => {
  const rollback = Effect.ignore(sql.unsafe("ROLLBACK"))
  const create = Effect.gen(function*() {
    const [objects] = yield* sql<{ readonly n: number }>`SELECT count(*) AS n FROM sqlite_master`
    if (objects?.n !== 0) return false
    for (const statement of freshSchemaStatements) yield* sql.unsafe(statement)
    const applied = freshSchemaMigrations.map((name) => {
      const [id, ...rest] = name.split("_")
      return { migrationId: Number.parseInt(id ?? "", 10), name: rest.join("_") }
    })
    yield* sql`INSERT INTO kern_migrations ${sql.insert(applied)}`
    return true
  })
  return sql.unsafe("BEGIN IMMEDIATE").pipe(
    Effect.zipRight(create.pipe(Effect.tap(() => sql.unsafe("COMMIT")), Effect.tapError(() => rollback))),
    Effect.uninterruptible,
    Effect.orElseSucceed(() => false)
  )
}

const sqliteHeader = Buffer.from("SQLite format 3\u0000", "latin1")

/**
 * Whether the file is absent, empty (SQLite starts a new database in both) or starts like an SQLite database.
 * SQLite itself would silently overwrite a file shorter than its header, and kern.db holds the audit log. Runs
 * inside Effect.try: an unreadable file is a DatabaseError.
 */
export const hasSqliteHeader = (file: string): boolean => {
  if (!NodeFs.existsSync(file)) return true
  const fd = NodeFs.openSync(file, "r")
  try {
    const head = Buffer.alloc(sqliteHeader.length)
    const read = NodeFs.readSync(fd, head, 0, head.length, 0)
    return read === 0 || (read === head.length && head.equals(sqliteHeader))
  } finally {
    NodeFs.closeSync(fd)
  }
}

/** kern.db (created empty if absent), its -wal and -shm: 0600, so no other local user reads a conversation. */
const privateDatabaseFiles = (file: string) => {
  NodeFs.closeSync(NodeFs.openSync(file, "a", privateFileMode))
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    const mode = NodeFs.statSync(path, { throwIfNoEntry: false })?.mode
    if (mode !== undefined && (mode & 0o777) !== privateFileMode) NodeFs.chmodSync(path, privateFileMode)
  }
}

const prepare = (options: DatabaseOptions) =>
  Effect.gen(function*() {
    const sql = yield* SqliteClient.SqliteClient
    const fail = (operation: DatabaseError["operation"]) => (error: SqlError | Migrator.MigrationError) =>
      new DatabaseError({ file: options.filename, operation, detail: describeCause(error) })
    yield* sql`PRAGMA busy_timeout = 5000`.pipe(Effect.mapError(fail("open")))
    yield* sql`PRAGMA foreign_keys = ON`.pipe(Effect.mapError(fail("open")))
    yield* sql`PRAGMA synchronous = NORMAL`.pipe(Effect.mapError(fail("open")))
    // Reads through a memory map: recall's vector prefilter scans every stored vector (19 MB at 100,000 chunks),
    // which through read() calls and the 2 MB page cache took twice as long (recall.search.100k).
    yield* sql`PRAGMA mmap_size = 268435456`.pipe(Effect.mapError(fail("open")))
    const migrations = options.migrations ?? allMigrations
    // A database already at the newest migration skips the migrator (its table check and transaction), which every
    // command would pay; any doubt (no table yet, a read error) leaves the decision to the migrator.
    const applied = yield* sql`SELECT max(migration_id) AS newest FROM kern_migrations`.pipe(
      Effect.flatMap(Schema.decodeUnknown(AppliedRows)),
      Effect.map((rows) => rows[0]?.newest ?? 0),
      Effect.orElseSucceed(() => 0)
    )
    if (applied >= newestId(migrations)) return
    if (applied === 0 && options.migrations === undefined && snapshotCovers(migrations) && (yield* createFromSnapshot(sql))) {
      return
    }
    // A migration may touch recall's vec0 table (0860 does): sqlite-vec first, as recall loads it (vectorExtension.ts).
    yield* loadVectorExtension(sql).pipe(Effect.mapError(fail("extension")))
    yield* runMigrations({ loader: Migrator.fromRecord(migrations), table: "kern_migrations" })
      .pipe(Effect.mapError(fail("migrate")))
  }).pipe(Effect.withSpan("kern.storage.prepare"))

/**
 * SqlClient over `filename` (WAL, busy timeout, foreign keys on) and every migration applied; sqlite-vec is loaded
 * by what uses it (vectorExtension.ts). The folder of the file is created first; `:memory:` gives a private in-memory
 * database.
 */
export const layer = (options: DatabaseOptions): Layer.Layer<SqliteClient.SqliteClient | SqlClient.SqlClient, DatabaseError> => {
  const open = Effect.try({
    try: () => {
      if (options.filename === ":memory:") return true
      NodeFs.mkdirSync(NodePath.dirname(options.filename), { recursive: true, mode: privateDirMode })
      const isDatabase = hasSqliteHeader(options.filename)
      // Created here with the private mode, whatever the umask: SQLite gives -wal and -shm the database's mode.
      if (isDatabase) privateDatabaseFiles(options.filename)
      return isDatabase
    },
    catch: (error) => new DatabaseError({ file: options.filename, operation: "open", detail: describeCause(error) })
  }).pipe(
    Effect.filterOrFail(
      (isDatabase) => isDatabase,
      () =>
        new DatabaseError({
          file: options.filename,
          operation: "open",
          detail: "it is not an SQLite database (it does not start with the SQLite header); kern leaves it as it is: " +
            "move it aside to start with a new one"
        })
    )
  )
  // A new file gets the snapshot on a connection of its own, before the client opens it (freshFile.ts); any failure
  // leaves the file to `prepare`, which decides as for any database.
  const fresh = options.filename === ":memory:" || options.migrations !== undefined || !snapshotCovers(allMigrations)
    ? Effect.void
    : Effect.ignore(Effect.try(() => createFreshFile(options.filename)))
  const client = SqliteClient.layer({
    filename: options.filename,
    transformResultNames: Str.snakeToCamel,
    transformQueryNames: Str.camelToSnake
  }).pipe(
    // better-sqlite3 throws on a file it cannot open or that is not a database: that is the user's file, not a bug.
    Layer.catchAllCause((cause) =>
      Layer.fail(new DatabaseError({ file: options.filename, operation: "open", detail: describeCause(Cause.squash(cause)) }))
    )
  )
  return Layer.effectDiscard(prepare(options)).pipe(
    Layer.provideMerge(client),
    Layer.provideMerge(Layer.effectDiscard(Effect.zipRight(open, fresh)))
  )
}

/** A fresh in-memory kern.db with every migration applied. */
export const layerMemory = layer({ filename: ":memory:" })
