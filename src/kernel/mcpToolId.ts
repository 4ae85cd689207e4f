/** Every MCP server's tool is registered as `mcp.<server>.<tool>` (src/mcp/toolSpecs.ts): the kernel knows them by it. */
export const isMcpToolId = (toolId: string): boolean => toolId.startsWith("mcp.")
