import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * How much of each audit journal (`.kern/audit/<name>.jsonl`, src/kernel/auditJournal.ts) is in kernel_events: its
 * events up to byte `committed`. Moved in the same transaction as the events, so a journal read again (a replay after
 * a crash, a batch cut short) adds each event once. A row lives as long as its journal file.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE audit_journals (
    file TEXT PRIMARY KEY NOT NULL,
    committed INTEGER NOT NULL
  ) WITHOUT ROWID`
})
