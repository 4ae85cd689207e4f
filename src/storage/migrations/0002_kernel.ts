import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The kernel's tables: the audit event log, approved contract baselines and durable memory. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS kernel_events (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts_ms INTEGER NOT NULL,
    decision_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    tool_id TEXT,
    args_digest TEXT,
    status TEXT NOT NULL,
    error_code TEXT,
    error_message TEXT,
    latency_ms REAL,
    retries INTEGER,
    contract_fingerprint TEXT,
    registered_fingerprint TEXT,
    contract_status TEXT,
    contract_enforcement TEXT,
    contract_mismatch INTEGER,
    detail TEXT
  )`
  yield* sql`CREATE INDEX IF NOT EXISTS kernel_events_run ON kernel_events (run_id, event_id)`
  yield* sql`CREATE INDEX IF NOT EXISTS kernel_events_tool ON kernel_events (tool_id, event_id)`
  yield* sql`CREATE TABLE IF NOT EXISTS contract_baselines (
    surface TEXT NOT NULL,
    tool_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    safety_class TEXT NOT NULL,
    side_effect_level TEXT NOT NULL,
    approved_by TEXT NOT NULL,
    approved_at_ms INTEGER NOT NULL,
    PRIMARY KEY (surface, tool_id)
  )`
  yield* sql`CREATE TABLE IF NOT EXISTS durable_memory (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    confidence REAL NOT NULL DEFAULT 1,
    created_at_ms INTEGER NOT NULL,
    ttl_s REAL
  )`
})
