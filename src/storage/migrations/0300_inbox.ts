import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The inbox: messages accepted from any channel and not yet recorded in a session. AUTOINCREMENT so an id is never
 * handed out twice, even after the newest rows are deleted: ids are the turn ids clients follow.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS inbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    interface TEXT NOT NULL,
    channel TEXT NOT NULL,
    user_id TEXT NOT NULL,
    text TEXT NOT NULL,
    received_at_ms INTEGER NOT NULL
  )`
})
