import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Each MCP server's tool list as it was last listed (name, description, input schema, annotations as JSON), so a
 * server that starts at first use has its tools offered before it ever runs in this process.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE mcp_tool_cache (
    server TEXT PRIMARY KEY,
    tools TEXT NOT NULL,
    listed_at INTEGER NOT NULL
  )`
})
