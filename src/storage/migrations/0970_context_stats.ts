import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Per-session counters of context_budget_stats: they belong to the session, so they outlive the process. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE context_stats (
    session_id TEXT PRIMARY KEY,
    active_context_tokens INTEGER NOT NULL DEFAULT 0,
    compactions INTEGER NOT NULL DEFAULT 0,
    saved_by_compaction_bytes INTEGER NOT NULL DEFAULT 0,
    duplicates INTEGER NOT NULL DEFAULT 0,
    saved_by_duplicates_bytes INTEGER NOT NULL DEFAULT 0
  )`
})
