import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The spend ledger: model calls' tokens and cost summed per day (the agent's timezone, `YYYY-MM-DD`) and per scope:
 * `agent` (key ''), `user` (`operator` or `interface:userId`), `channel` (`interface:channel`), `conversation` (its
 * id) and `purpose` (turn, heartbeat, summary, embedding, other). Cost in micro-USD (millionths of a dollar), an
 * integer: a call of a cheap model costs less than a hundredth of a cent. The key is the primary key, so the check
 * before each call reads its few rows by index and a call's record is one upsert per scope.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE spend_ledger (
    day TEXT NOT NULL,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    calls INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_micro_usd INTEGER NOT NULL,
    PRIMARY KEY (day, scope, key)
  ) WITHOUT ROWID`
})
