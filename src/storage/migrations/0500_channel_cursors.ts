import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Where each chat channel is in its peer's stream (Telegram's update offset, the Slack envelopes already taken), written
 * in the same transaction as the inbox rows it covers: a message is either in the inbox and behind the cursor, or
 * neither, whenever the process dies.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS channel_cursors (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL
  )`
})
