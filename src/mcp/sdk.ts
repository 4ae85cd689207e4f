import { Effect } from "effect"
import { McpFailure } from "./McpFailure.js"

/**
 * The official MCP SDK, imported on first use: `kern --help`, and every command and turn of an agent without
 * `mcpServers`, never load it (test/package/lazySdks.test.ts).
 */
export const loadSdk = Effect.tryPromise({
  try: async () => {
    const [client, stdio, http, sse, types] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/stdio.js"),
      import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
      import("@modelcontextprotocol/sdk/client/sse.js"),
      import("@modelcontextprotocol/sdk/types.js")
    ])
    return {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      SSEClientTransport: sse.SSEClientTransport,
      McpError: types.McpError,
      ErrorCode: types.ErrorCode,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema
    }
  },
  catch: (error) =>
    new McpFailure({ server: "", reason: "sdk", detail: `could not load the MCP SDK: ${String(error)}` })
}).pipe(Effect.withSpan("kern.mcp.loadSdk"))

export type Sdk = Effect.Effect.Success<typeof loadSdk>
export type SdkClient = InstanceType<Sdk["Client"]>
