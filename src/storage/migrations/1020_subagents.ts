import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Sub-agents (the spawn tool): each one's task, the parent turn it reports to and the terms it runs under (depth,
 * the tools it may call, its user's scope and audience, who approves its calls, its carved budget and what it used),
 * and its state. `running` until its turn
 * ends; a restart reports the running ones as `interrupted`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE subagents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task TEXT NOT NULL,
    parent_interface TEXT NOT NULL,
    parent_channel TEXT NOT NULL,
    parent_user_id TEXT NOT NULL,
    parent_session_id TEXT NOT NULL,
    approver TEXT NOT NULL,
    depth INTEGER NOT NULL,
    tools TEXT NOT NULL,
    tool_scope TEXT,
    audience TEXT,
    budget TEXT NOT NULL,
    used TEXT NOT NULL,
    state TEXT NOT NULL,
    outcome TEXT,
    created_at_ms INTEGER NOT NULL,
    ended_at_ms INTEGER
  )`
  yield* sql`CREATE INDEX subagents_state ON subagents (state)`
})
