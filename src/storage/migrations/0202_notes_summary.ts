import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The rolling summary of the notes before the latest, keyed by the latest note's name and the notes' hashes. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS notes_summary (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    cache_key TEXT NOT NULL,
    sources TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
  )`
})
