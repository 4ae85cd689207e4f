import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import type { McpTool } from "./toolSpecs.js"

/** A tool as the cache keeps it: the fields kern reads from a server's list. */
const CachedTool = Schema.Struct({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  inputSchema: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  annotations: Schema.optional(Schema.Struct({
    title: Schema.optional(Schema.String),
    readOnlyHint: Schema.optional(Schema.Boolean),
    destructiveHint: Schema.optional(Schema.Boolean),
    idempotentHint: Schema.optional(Schema.Boolean),
    openWorldHint: Schema.optional(Schema.Boolean)
  }))
})
const CachedTools = Schema.parseJson(Schema.Array(CachedTool))
const decodeTools = Schema.decodeUnknown(CachedTools)
const encodeTools = Schema.encode(CachedTools)

const keep = (tool: McpTool): typeof CachedTool.Type => ({
  name: tool.name,
  ...(tool.title === undefined ? {} : { title: tool.title }),
  ...(tool.description === undefined ? {} : { description: tool.description }),
  inputSchema: tool.inputSchema,
  ...(tool.annotations === undefined ? {} : {
    annotations: Object.fromEntries(Object.entries(tool.annotations).filter(([, value]) => value !== undefined))
  })
})

/** Records `tools` as what `server` listed last (at each listing: a connection, a list_changed). */
export const saveCachedTools = (server: string, tools: ReadonlyArray<McpTool>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const text = yield* encodeTools(tools.map(keep))
    const now = yield* Clock.currentTimeMillis
    yield* sql`INSERT INTO mcp_tool_cache (server, tools, listed_at) VALUES (${server}, ${text}, ${now})
      ON CONFLICT(server) DO UPDATE SET tools = excluded.tools, listed_at = excluded.listed_at`
  }).pipe(Effect.withSpan("kern.mcp.cacheTools", { attributes: { server } }))

/** What `server` listed last, if it was ever listed; a row that no longer decodes counts as none. */
export const loadCachedTools = (server: string): Effect.Effect<Option.Option<ReadonlyArray<McpTool>>, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ tools: string }>`SELECT tools FROM mcp_tool_cache WHERE server = ${server}`
    if (rows[0] === undefined) return Option.none()
    return Option.some<ReadonlyArray<McpTool>>(yield* decodeTools(rows[0].tools))
  }).pipe(
    Effect.catchAll((error) =>
      Effect.as(Effect.logWarning(`kern: the cached tool list of MCP server "${server}" is unreadable (${error.message}); its tools are unknown until it starts`), Option.none())
    ),
    Effect.withSpan("kern.mcp.cachedTools", { attributes: { server } })
  )
