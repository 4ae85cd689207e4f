import { Schema } from "effect"

/** One configured MCP server as `/status`, `kern mcp list` and the web UI show it. */
export const McpServerState = Schema.Struct({
  name: Schema.String,
  transport: Schema.Literal("stdio", "http", "sse"),
  state: Schema.Literal("connected", "starting", "failed", "disabled", "idle"),
  /** Tools registered (connected; or, not started yet, from the list it gave when it last ran). */
  tools: Schema.Int,
  /** Not started yet, its tools registered from kern.db's cache of its last listing (false: never listed). */
  toolsCached: Schema.optional(Schema.Boolean),
  /** Why it failed: the error, then the last lines it wrote to stderr (secrets redacted). */
  reason: Schema.optional(Schema.String),
  stderrTail: Schema.optional(Schema.String),
  /** Connections made since the agent started; more than one means it was restarted. */
  connections: Schema.Int
})
export type McpServerState = typeof McpServerState.Type

/** `connected (12 tools)`, `failed: spawn x ENOENT`, as `kern mcp list` and `kern status` say it. */
export const describeState = (state: McpServerState): string => {
  switch (state.state) {
    case "connected":
      return `connected (${state.tools} tool${state.tools === 1 ? "" : "s"})`
    case "failed":
      return `failed: ${state.reason ?? "unknown reason"}`
    case "idle":
      return state.toolsCached === true
        ? `not started (starts at first use; ${state.tools} tool${state.tools === 1 ? "" : "s"} as it last listed them)`
        : "not started (starts at first use; its tools are unknown until then)"
    default:
      return state.state
  }
}
