import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Retention (`retention` config, `kern gc`, the running agent's daily job):
 * - an artifact's last use (a tool output seen again counts as a use) orders what goes first; a pruned artifact keeps
 *   its row with `pruned_at_ms`, so reopening it says it was pruned, and when, instead of that it never existed;
 * - per-session context counters carry when they last changed, so idle ones can age out;
 * - `usage_carried` holds the usage of finished turns whose events were pruned: the all-time usage totals stay whole;
 * - `retention_state` is when retention last ran and what it freed (the daily job's due time survives a restart).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tool_artifacts ADD COLUMN last_used_at_ms INTEGER NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE tool_artifacts ADD COLUMN pruned_at_ms INTEGER`
  yield* sql`UPDATE tool_artifacts SET last_used_at_ms = max(created_at_ms, coalesce(
    (SELECT max(first_seen_at_ms) FROM tool_artifact_uses u WHERE u.artifact_id = tool_artifacts.artifact_id), 0))`
  yield* sql`CREATE INDEX tool_artifacts_last_used ON tool_artifacts (last_used_at_ms) WHERE pruned_at_ms IS NULL`
  yield* sql`ALTER TABLE context_stats ADD COLUMN updated_at_ms INTEGER NOT NULL DEFAULT 0`
  yield* sql`UPDATE context_stats SET updated_at_ms = CAST(unixepoch('subsec') * 1000 AS INTEGER)`
  yield* sql`CREATE TABLE usage_carried (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    turns INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    cost_usd_cents REAL NOT NULL
  )`
  yield* sql`CREATE TABLE retention_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_run_at_ms INTEGER NOT NULL,
    report TEXT NOT NULL
  )`
})
