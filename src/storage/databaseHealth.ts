import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * kern.db is missing beside sessions it once indexed, or SQLite's own check finds it damaged. kern refuses to start
 * rather than going on with an empty or broken database: what it holds that the session files cannot give back
 * (usage, the audit log, pairings) would be gone without a word.
 */
export class DatabaseProblem extends Schema.TaggedError<DatabaseProblem>()("DatabaseProblem", {
  file: Schema.String,
  reason: Schema.Literal("missing", "damaged"),
  detail: Schema.String
}) {
  override get message(): string {
    const file = this.file
    const rebuildable = "What the session files give back: the recall index (`kern recall reindex`), the context's " +
      "segments and summaries (`kern segments rebuild`) and the session list (at the next start)."
    const lost = "What they cannot: usage and cost totals, the audit log, paired users and their scopes, channel " +
      "positions, messages still waiting in the inbox, the heartbeat log."
    if (this.reason === "missing") {
      return `${file} is missing, but ${this.detail}: kern does not start over with an empty database without being told.\n` +
        `${rebuildable}\n${lost}\n` +
        `Put the file back (from a backup) if you have it; to start over with an empty one, create it: touch ${file}`
    }
    const aside = `${file}.damaged`
    return `${file} is damaged: SQLite's integrity check fails (${this.detail}).\n${rebuildable}\n${lost}\n` +
      `Put a good copy back (from a backup) if you have one, or try \`sqlite3 ${NodePath.basename(file)} .recover\`; ` +
      `to start over with an empty one: mv ${file} ${aside} (and its -wal and -shm files, if present), then touch ${file}`
  }
}

/** Session files in `sessionsDir` (none when it does not exist). */
const sessionCount = (sessionsDir: string): number =>
  NodeFs.existsSync(sessionsDir) ? NodeFs.readdirSync(sessionsDir).filter((name) => name.endsWith(".jsonl")).length : 0

/**
 * Before kern.db is opened: a missing file beside existing sessions is refused (SQLite would create an empty one).
 * An empty file is the operator's word that starting over is meant.
 */
export const refuseMissing = (dbFile: string, sessionsDir: string): Effect.Effect<void, DatabaseProblem> =>
  Effect.try({
    try: () => NodeFs.existsSync(dbFile) ? 0 : sessionCount(sessionsDir),
    catch: (error) => new DatabaseProblem({ file: dbFile, reason: "missing", detail: `its folder could not be read: ${String(error)}` })
  }).pipe(
    Effect.flatMap((sessions) =>
      sessions === 0
        ? Effect.void
        : Effect.fail(
          new DatabaseProblem({
            file: dbFile,
            reason: "missing",
            detail: `${NodePath.relative(NodePath.dirname(NodePath.dirname(dbFile)), sessionsDir)}/ holds ${sessions} session(s)`
          })
        )
    ),
    Effect.withSpan("kern.storage.refuseMissing")
  )

const CheckRows = Schema.Array(Schema.Record({ key: Schema.String, value: Schema.String }))

/** SQLite's `PRAGMA quick_check` (the first few problems), at a long-running agent's start. */
export const quickCheck = (dbFile: string): Effect.Effect<void, DatabaseProblem, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const damaged = (detail: string) => new DatabaseProblem({ file: dbFile, reason: "damaged", detail })
    const rows = yield* sql`PRAGMA quick_check(5)`.pipe(
      Effect.flatMap(Schema.decodeUnknown(CheckRows)),
      // SQLite's own words ("database disk image is malformed") are in the SqlError's cause.
      Effect.mapError((error) => damaged("cause" in error && error.cause instanceof Error ? error.cause.message : error.message))
    )
    const problems = rows.flatMap((row) => Object.values(row)).filter((line) => line !== "ok")
    if (problems.length > 0) return yield* damaged(problems.join("; "))
  }).pipe(Effect.withSpan("kern.storage.quickCheck"))
