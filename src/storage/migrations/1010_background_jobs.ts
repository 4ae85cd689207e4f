import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Background bash commands (`bash` with `background: true`): one row per job, `running` until it ends (`finished`,
 * `killed`, `timed_out`) or until the next start finds it still `running` from a process that stopped or died
 * (`interrupted`). Where it came from (the origin and conversation) is where its end is reported.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE background_jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    command TEXT NOT NULL,
    state TEXT NOT NULL,
    conversation TEXT NOT NULL,
    origin_interface TEXT NOT NULL,
    origin_channel TEXT NOT NULL,
    origin_user TEXT NOT NULL,
    session_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    pid INTEGER,
    output_file TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    ended_at_ms INTEGER,
    exit_code INTEGER,
    signal TEXT,
    output_bytes INTEGER NOT NULL DEFAULT 0,
    dropped_bytes INTEGER NOT NULL DEFAULT 0,
    artifact_id TEXT
  )`
  yield* sql`CREATE INDEX background_jobs_state ON background_jobs (state)`
  yield* sql`CREATE INDEX background_jobs_conversation ON background_jobs (conversation, id)`
})
