import { Schema } from "effect"
import type { McpServerConfig } from "../config/mcpServers.js"
import type { ToolRegistry } from "../kernel/ToolRegistry.js"
import { McpSafetyClass } from "../config/mcpServers.js"
import { type McpTool, mcpToolId, safetyClassOf } from "./toolSpecs.js"

/** One tool of a server as `kern mcp tools` shows it (and the running agent's GET /mcp/servers/:server/tools). */
export const McpToolRow = Schema.Struct({
  server: Schema.String,
  tool: Schema.String,
  /** The kernel tool it is; null when the server's `tools` allow list leaves it out. */
  toolId: Schema.NullOr(Schema.String),
  safetyClass: McpSafetyClass,
  description: Schema.String
})
export type McpToolRow = typeof McpToolRow.Type

/** A server's listed tools against the registry: which kernel tool each one is and its safety class. */
export const mcpToolRows = (
  server: string,
  config: McpServerConfig | undefined,
  listed: ReadonlyArray<McpTool>,
  registry: ToolRegistry["Type"]
): ReadonlyArray<McpToolRow> =>
  listed.map((tool) => {
    const id = mcpToolId(server, tool.name)
    const registered = registry.lookup(id)
    return {
      server,
      tool: tool.name,
      toolId: registered === undefined ? null : id,
      safetyClass: registered?.spec.safetyClass ?? safetyClassOf(tool, config?.overrides[tool.name]?.safetyClass),
      description: tool.description ?? ""
    }
  })
