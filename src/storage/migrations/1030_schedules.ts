import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Schedules (the schedule tool, `kern schedule`, the web UI's Schedules view) and what became of each run: a run is
 * `fired` (its turn was posted, exactly once per schedule and due time) or `missed` (the agent was down and the misfire
 * policy skipped it), so `kern schedule list` and `kern status` can say what was missed. `next_due_ms` is NULL once a
 * schedule has no run left (a one-shot that fired or was missed); removing one deletes it and its runs.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS schedules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('at', 'cron')),
    cron TEXT,
    at_ms INTEGER,
    timezone TEXT NOT NULL,
    prompt TEXT NOT NULL,
    misfire TEXT NOT NULL CHECK (misfire IN ('skip', 'once', 'all')),
    grace_ms INTEGER NOT NULL,
    deliver_to TEXT,
    origin_interface TEXT NOT NULL,
    origin_channel TEXT NOT NULL,
    origin_user_id TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    next_due_ms INTEGER
  )`
  yield* sql`CREATE INDEX IF NOT EXISTS schedules_next_due ON schedules (next_due_ms) WHERE next_due_ms IS NOT NULL`
  yield* sql`CREATE TABLE IF NOT EXISTS schedule_runs (
    schedule_id INTEGER NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    due_ms INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('fired', 'missed')),
    at_ms INTEGER NOT NULL,
    PRIMARY KEY (schedule_id, due_ms)
  )`
})
