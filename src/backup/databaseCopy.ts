import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Effect, Layer, Ref, Schema } from "effect"
import * as NodeFs from "node:fs"
import { journalFolder } from "../kernel/auditJournal.js"
import { ingestOthers } from "../kernel/journalIngest.js"
import { BackupError, describe } from "./BackupError.js"

const failed = (file: string, what: string) => (error: unknown) =>
  new BackupError({ reason: "database", message: `${file}: could not ${what}: ${describe(error)}` })

/**
 * A connection of its own to `file`; no migrations run. better-sqlite3 throws on a file that is not a database: that
 * is the archive's or the folder's fault, an error, not a defect.
 */
const connection = (file: string) =>
  SqliteClient.layer({ filename: file }).pipe(Layer.catchAllCause((cause) => Layer.fail(Cause.squash(cause))))

/**
 * An online copy of kern.db into `target` (which must not exist) with `VACUUM INTO`: one read transaction, so the copy
 * is the database as it was at one moment, while a running agent goes on writing (WAL lets it). A missing kern.db (an
 * agent that never ran) is copied as an empty file, which kern takes for a fresh database.
 *
 * The audit events still in journals (`.kern/audit/`: a running agent's last half second, a killed process's never
 * replayed) are moved into kern.db first, as any reader of the event log does (journalIngest.ts), so the copy holds
 * every event recorded before the backup began. kern.db refusing them is said and the copy goes on: they stay in the
 * journals, where the agent writes them to kern.db itself.
 */
export const copyDatabase = (source: string, target: string): Effect.Effect<void, BackupError> =>
  NodeFs.existsSync(source)
    ? Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`PRAGMA busy_timeout = 10000`
      yield* ingestOthers(sql, journalFolder(source), undefined, yield* Ref.make<ReadonlyMap<string, number>>(new Map())).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(`kern: audit events still in ${journalFolder(source)} are not in this backup (kern.db refused them: ${error.message})`)
        )
      )
      yield* sql`VACUUM INTO ${target}`
    }).pipe(
      Effect.provide(connection(source)),
      Effect.mapError(failed(source, "copy the database")),
      Effect.withSpan("kern.backup.copyDatabase")
    )
    : Effect.try({ try: () => NodeFs.writeFileSync(target, "", { flag: "wx", mode: 0o600 }), catch: failed(target, "write") })

const CheckRows = Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/** SQLite's `PRAGMA integrity_check` of a copy: the problems it finds (none: []); an empty file has none. */
export const integrityProblems = (file: string): Effect.Effect<ReadonlyArray<string>, BackupError> =>
  NodeFs.statSync(file, { throwIfNoEntry: false })?.size === 0
    ? Effect.succeed([])
    : Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`PRAGMA integrity_check(20)`.pipe(Effect.flatMap(Schema.decodeUnknown(CheckRows)))
      return rows.flatMap((row) => Object.values(row).map(String)).filter((line) => line !== "ok")
    }).pipe(
      Effect.provide(connection(file)),
      Effect.mapError(failed(file, "check the database")),
      Effect.withSpan("kern.backup.integrityCheck")
    )
