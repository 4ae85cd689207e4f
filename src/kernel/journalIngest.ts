import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Ref } from "effect"
import * as NodePath from "node:path"
import { transaction } from "../storage/transaction.js"
import { journalExists, journalSize, listJournals, readUnread, readUnreadBatch, removeJournal, writerRunning } from "./auditJournal.js"
import { insertRowsFor, insertValues, lineProblem } from "./eventRows.js"
import type { PendingRows } from "./pendingRows.js"

/**
 * Audit journals into kern.db. A journal's row in `audit_journals` says up to which byte its events are in
 * `kernel_events`; a pass writes the events past it and moves it in one transaction, so a pass interrupted anywhere
 * (the process killed, kern.db refusing the commit) leaves both as they were, and a journal read again (a restart's
 * replay, another process's read, the writer's own next batch) adds each event exactly once. Any process may move
 * any journal's events; only the writer appends to it, and a journal is deleted only once all of it is in kern.db.
 */

/** A journal could not be read (not: kern.db refused its events). */
export class JournalError extends Data.TaggedError("JournalError")<{ readonly path: string; readonly detail: string }> {
  override get message(): string {
    return `${this.path}: ${this.detail}`
  }
}

/** Where a journal stands after a pass. */
export interface Ingested {
  /** Bytes of it whose events are in kern.db. */
  readonly committed: number
  /** Its size when read: past `committed`, a line being written (or torn, when its writer is gone). */
  readonly size: number
  /** It was deleted meanwhile: all of it was in kern.db, and its row is gone with it. */
  readonly gone: boolean
}

const detailOf = (error: unknown) => (error instanceof Error ? error.message : String(error))
const isMissing = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT"

/**
 * One pass: the whole lines past the journal's offset (about a MiB at most) into kern.db, with the new offset. Each
 * line is checked to be an event, unless the journal is `own`: this event log's, whose whole lines it wrote itself
 * from its events' values a moment ago (a failed write ends the journal, so no torn line sits before a whole one).
 * Its lines' values the log still holds (`pending`, SQLite only) are bound as they are, with no read of the file.
 */
const pass = (
  sql: SqlClient.SqlClient,
  folder: string,
  name: string,
  own: boolean,
  pending: PendingRows | undefined
): Effect.Effect<Ingested, SqlError | JournalError> => {
  const path = NodePath.join(folder, name)
  return transaction(sql)(Effect.gen(function*() {
    // A write first: the transaction holds kern.db's write lock before it reads, so two processes moving the same
    // journal take turns, and the second finds the first one's offset.
    const [row] = yield* sql<{ readonly committed: number }>`INSERT INTO audit_journals (file, committed) VALUES (${name}, 0)
      ON CONFLICT (file) DO UPDATE SET committed = audit_journals.committed RETURNING committed`
    const committed = row?.committed ?? 0
    const held = pending?.takeFrom(committed)
    if (held !== undefined) {
      for (const [statement, params] of insertValues(held.values, held.rows)) yield* sql.unsafe(statement, params)
      yield* sql`UPDATE audit_journals SET committed = ${held.end} WHERE file = ${name}`
      // The file is not looked at: what it holds past the copy was appended after the pass began.
      return { committed: held.end, size: held.end, gone: false }
    }
    // The own journal's lines as one batch as they are on disk (no check, no string per line); any other's line by line.
    const read = yield* Effect.try({
      try: () => (own ? readUnreadBatch(path, committed) : undefined) ?? readUnread(path, committed),
      catch: (error) => error
    }).pipe(Effect.either)
    if (read._tag === "Left") {
      if (!isMissing(read.left)) return yield* new JournalError({ path, detail: `could not be read: ${detailOf(read.left)}` })
      yield* sql`DELETE FROM audit_journals WHERE file = ${name}`
      return { committed, size: committed, gone: true }
    }
    const unread = read.right
    if (unread.end === committed) return { committed, size: unread.size, gone: false }
    if ("batch" in unread) {
      // PostgreSQL takes the batch as text; SQLite reads the bytes as text as they are (eventRows.ts).
      const batch = unread.batch
      if (batch !== undefined) {
        yield* sql.unsafe(insertRowsFor(sql), [sql.onDialectOrElse({ pg: () => batch.toString("utf8"), orElse: () => batch })])
      }
    } else {
      const events: Array<string> = []
      for (const line of unread.lines) {
        const problem = own ? undefined : lineProblem(line.text)
        if (problem === undefined) events.push(line.text)
        else yield* Effect.logWarning(`kern: ${path}: the line at byte ${line.at} is not an audit event (${problem}): skipped`)
      }
      if (events.length > 0) yield* sql.unsafe(insertRowsFor(sql), [`[${events.join(",")}]`])
    }
    yield* sql`UPDATE audit_journals SET committed = ${unread.end} WHERE file = ${name}`
    return { committed: unread.end, size: unread.size, gone: false }
  }))
}

/**
 * Every whole line of a journal past its offset into kern.db, pass after pass. `own`: the caller's own journal, whose
 * lines it wrote (their check is skipped), and the copy of them it holds (`pending`: SQLite only, as the statements
 * binding them are); another process's lines, or a dead one's, are each checked.
 */
export const ingestJournal = (
  sql: SqlClient.SqlClient,
  folder: string,
  name: string,
  own = false,
  pending?: PendingRows
): Effect.Effect<Ingested, SqlError | JournalError> =>
  Effect.gen(function*() {
    let before = -1
    let now = yield* pass(sql, folder, name, own, pending)
    while (!now.gone && now.committed < now.size && now.committed !== before) {
      before = now.committed
      now = yield* pass(sql, folder, name, own, pending)
    }
    return now
  }).pipe(Effect.withSpan("kern.eventlog.ingest", { attributes: { journal: name }, captureStackTrace: false }))

/**
 * A journal whose writer is gone and whose whole lines are in kern.db: a partial last line (the writer stopped in the
 * middle of it) said and skipped, then the file and its row deleted.
 */
export const retireJournal = (sql: SqlClient.SqlClient, folder: string, name: string, ingested: Ingested) =>
  Effect.gen(function*() {
    if (ingested.gone) return
    const path = NodePath.join(folder, name)
    if (ingested.size > ingested.committed) {
      yield* Effect.logWarning(
        `kern: ${path} ends in a partial line (${ingested.size - ingested.committed} bytes: its process stopped while ` +
          "writing it): skipped"
      )
    }
    yield* Effect.try({ try: () => removeJournal(folder, name), catch: (error) => new JournalError({ path, detail: `could not be deleted: ${detailOf(error)}` }) })
    // The file first: a row whose file is gone is forgotten later (forgetRetired), a file without its row would be read again.
    yield* sql`DELETE FROM audit_journals WHERE file = ${name}`
  })

/**
 * The rows of journals whose files are gone (deleted, and their row not: kern.db refused it then). A row is made only
 * by a pass that found its file, and a journal's name is never used again, so a missing file is a retired journal.
 */
export const forgetRetired = (sql: SqlClient.SqlClient, folder: string) =>
  Effect.gen(function*() {
    const rows = yield* sql<{ readonly file: string }>`SELECT file FROM audit_journals`
    const gone = rows.map((row) => row.file).filter((file) => !journalExists(folder, file))
    if (gone.length > 0) yield* sql`DELETE FROM audit_journals WHERE ${sql.in("file", gone)}`
  })

/**
 * Every journal in `folder` but this event log's own into kern.db: another process's, so a read here sees its events
 * too, and a stopped process's (a crash, kill -9), which is then retired. `known` holds the offsets seen last time, so
 * a journal that has not grown costs a stat, not a transaction. One that cannot be read is warned about and left;
 * kern.db refusing the events fails the whole (they stay in the journals).
 */
export const ingestOthers = (
  sql: SqlClient.SqlClient,
  folder: string,
  own: string | undefined,
  known: Ref.Ref<ReadonlyMap<string, number>>
): Effect.Effect<void, SqlError> =>
  Effect.gen(function*() {
    const names = yield* Effect.try({ try: () => listJournals(folder), catch: (error) => new JournalError({ path: folder, detail: detailOf(error) }) })
    const seen = yield* Ref.get(known)
    const now = new Map<string, number>()
    for (const name of names) {
      if (name === own) continue
      // Asked before the pass: a writer that stops during it leaves lines the next read takes.
      const running = writerRunning(name)
      const size = journalSize(folder, name)
      const committed = seen.get(name)
      const ingested = committed !== undefined && size !== undefined && size <= committed
        ? { committed, size, gone: false }
        : yield* ingestJournal(sql, folder, name).pipe(Effect.catchTag("JournalError", (error) =>
          Effect.as(Effect.logWarning(`kern: audit journal ${error.message}`), undefined)))
      if (ingested === undefined) continue
      if (!running) yield* retireJournal(sql, folder, name, ingested).pipe(Effect.catchTag("JournalError", (error) =>
        Effect.logWarning(`kern: audit journal ${error.message}`)))
      else if (!ingested.gone) now.set(name, ingested.committed)
    }
    yield* Ref.set(known, now)
  }).pipe(Effect.catchTag("JournalError", (error) => Effect.logWarning(`kern: audit journals ${error.message}`)))
