import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Context, Effect, Either, Layer, Option, Schema, type Scope, String as Str } from "effect"
import * as NodeFs from "node:fs"
import * as sqliteVec from "sqlite-vec"
import type { AgentPaths } from "../../config/paths.js"
import { hasSqliteHeader, newestId } from "../../storage/Database.js"
import { type DatabaseProblem, quickCheck, refuseMissing } from "../../storage/databaseHealth.js"
import { migrations } from "../../storage/migrations.js"
import { type CheckResult, problem, resultOf, warning } from "./Check.js"

/** What the database check found, and kern.db opened read-only for the checks that read it, when it could be. */
export interface DatabaseOutcome {
  readonly result: CheckResult
  readonly reader: Option.Option<Context.Context<SqlClient.SqlClient>>
}

const check = "database"

const detailOf = (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  const inner = typeof error === "object" && error !== null && "cause" in error && error.cause instanceof Error ? error.cause : error
  return inner instanceof Error ? inner.message : String(inner)
}

/** A DatabaseProblem's message is its diagnosis, what the sessions give back and lose, and what to do (the last line). */
const fromProblem = (error: DatabaseProblem): CheckResult => {
  const lines = error.message.split("\n")
  return resultOf(check, [problem(lines[0] ?? error.message, lines.at(-1) ?? "")], "")
}

/**
 * kern.db opened read-only (a running agent's writes go on beside it; nothing is migrated, created or tightened),
 * with sqlite-vec loaded so the recall vectors' table reads as it does for kern.
 */
const openReadOnly = (file: string) =>
  Layer.build(
    SqliteClient.layer({
      filename: file,
      readonly: true,
      disableWAL: true,
      transformResultNames: Str.snakeToCamel,
      transformQueryNames: Str.camelToSnake
    }).pipe(Layer.catchAllCause((cause) => Layer.fail(detailOf(cause))))
  ).pipe(
    Effect.tap((context) =>
      Context.get(context, SqliteClient.SqliteClient).loadExtension(sqliteVec.getLoadablePath()).pipe(
        Effect.mapError((error) => `could not load sqlite-vec: ${error.message}`)
      )
    )
  )

const Newest = Schema.Array(Schema.Struct({ newest: Schema.NullOr(Schema.Number) }))
const Objects = Schema.Array(Schema.Struct({ n: Schema.Number }))

/** The newest migration kern.db records, or none when it holds no table at all (a new, empty database). */
const appliedMigration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [objects] = yield* Effect.flatMap(sql`SELECT count(*) AS n FROM sqlite_master`, Schema.decodeUnknown(Objects))
  if (objects?.n === 0) return Option.none<number>()
  const rows = yield* Effect.flatMap(sql`SELECT max(migration_id) AS newest FROM kern_migrations`, Schema.decodeUnknown(Newest))
  return Option.some(rows[0]?.newest ?? 0)
})

/**
 * kern.db: there (or rightly absent), an SQLite database, passing SQLite's `PRAGMA quick_check`, at the migration
 * this kern expects. A missing or damaged database says what the session files give back, as kern run does.
 */
export const databaseCheck = (paths: AgentPaths): Effect.Effect<DatabaseOutcome, never, Scope.Scope> =>
  Effect.gen(function*() {
    const none = (result: CheckResult): DatabaseOutcome => ({ result, reader: Option.none() })
    const missing = yield* Effect.either(refuseMissing(paths.dbFile, paths.sessionsDir))
    if (Either.isLeft(missing)) return none(fromProblem(missing.left))
    const size = NodeFs.statSync(paths.dbFile, { throwIfNoEntry: false })?.size
    if (size === undefined) return none(resultOf(check, [], "no kern.db yet (the agent makes it at its first start)"))
    if (size === 0) return none(resultOf(check, [], "kern.db is empty (kern makes a new database in it at the next start)"))
    if (!hasSqliteHeader(paths.dbFile)) {
      return none(resultOf(check, [problem(
        `${paths.dbFile} is not an SQLite database (it does not start with the SQLite header)`,
        `put kern.db back from a backup (kern restore), or move it aside to start with a new one: mv ${paths.dbFile} ${paths.dbFile}.damaged`
      )], ""))
    }
    const opened = yield* Effect.either(openReadOnly(paths.dbFile))
    if (Either.isLeft(opened)) {
      return none(resultOf(check, [problem(
        `${paths.dbFile} could not be opened: ${opened.left}`,
        `put kern.db back from a backup (kern restore), or try sqlite3 kern.db .recover`
      )], ""))
    }
    const reader = opened.right
    const damaged = yield* Effect.either(Effect.provide(quickCheck(paths.dbFile), reader))
    if (Either.isLeft(damaged)) return none(fromProblem(damaged.left))
    const applied = yield* Effect.either(Effect.provide(appliedMigration, reader))
    const expected = newestId(migrations)
    if (Either.isLeft(applied)) {
      return none(resultOf(check, [problem(
        `${paths.dbFile} has no readable migration record: ${applied.left.message}`,
        "it was not made by kern, or it is damaged: put kern.db back from a backup"
      )], ""))
    }
    const at = Option.getOrElse(applied.right, () => expected)
    const findings = at > expected
      ? [problem(
        `${paths.dbFile} is at migration ${at}, newer than this kern knows (${expected}): a newer kern wrote it`,
        "run the kern that wrote it (update this one)"
      )]
      : at < expected
      ? [warning(`${paths.dbFile} is at migration ${at} of ${expected}`, "kern migrates it at the next start of the agent (kern run or kern start)")]
      : []
    return { result: resultOf(check, findings, `kern.db passes SQLite's quick_check, at migration ${expected}`), reader: Option.some(reader) }
  })
