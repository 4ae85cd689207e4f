import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The summary model's health, so a restart neither forgets a failing summarizer's backoff (and hammers it again at
 * once) nor its last success; one row per kern.db (one agent), for the summarizer it names (provider, base URL and
 * model: a changed one starts without the old one's failures). And where a session's raw window starts when the
 * fallback cut put it past the summarized messages (`raw_start`; NULL: at `message_index`, the usual case): the
 * session is still read from `message_index`, so the summaries can catch up on the messages in between.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS context_summarizer (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    summarizer TEXT NOT NULL,
    consecutive_failures INTEGER NOT NULL,
    last_error TEXT,
    last_failure_at_ms INTEGER,
    last_success_at_ms INTEGER,
    next_attempt_at_ms INTEGER
  )`
  yield* sql`ALTER TABLE context_cuts ADD COLUMN raw_start INTEGER`
})
