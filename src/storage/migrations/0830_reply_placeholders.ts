import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The placeholder a chat channel posted for a turn ("…" in Telegram, "_thinking…_" in Slack), kept until the turn's
 * reply replaces it: a row left at start is a turn the last process did not finish showing (see ReplyPlaceholders).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS reply_placeholders (
    interface TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    message_id TEXT NOT NULL,
    posted_at_ms INTEGER NOT NULL,
    PRIMARY KEY (interface, turn_id)
  )`
})
