import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The context of long-lived conversations (src/context/): the segment tree of each session (L0 segments cut from the
 * messages, parents rolling up 10 children; `summary` stays NULL until the summary model has written one), the cut
 * where each session's raw window starts, and the per-model token correction learnt from providers' counts.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS context_segments (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    level INTEGER NOT NULL,
    start_idx INTEGER NOT NULL,
    end_idx INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    first_at TEXT NOT NULL,
    last_at TEXT NOT NULL,
    summary TEXT,
    summary_tokens INTEGER NOT NULL DEFAULT 0,
    parent_id INTEGER REFERENCES context_segments (id) ON DELETE SET NULL,
    created_at_ms INTEGER NOT NULL
  )`
  yield* sql`CREATE INDEX IF NOT EXISTS context_segments_span ON context_segments (session_id, level, start_idx)`
  yield* sql`CREATE TABLE IF NOT EXISTS context_cuts (
    session_id TEXT PRIMARY KEY NOT NULL,
    message_index INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL,
    lines_before INTEGER NOT NULL,
    at TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE IF NOT EXISTS context_calibration (
    model TEXT PRIMARY KEY NOT NULL,
    ratio REAL NOT NULL
  )`
})
