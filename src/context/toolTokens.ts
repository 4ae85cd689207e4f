import { Tool } from "@effect/ai"
import { toAiTool } from "../kernel/aiTools.js"
import { isMcpToolId } from "../kernel/mcpToolId.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import type { TokenCounter } from "../model/tokenizer.js"

/**
 * What tool definitions cost in the context: each tool's name, description and parameters' JSON Schema, as the
 * provider sends them (near enough: the wire's own framing is a few tokens a tool).
 */
export const toolDefinitionsTokens = (tools: Iterable<Parameters<typeof Tool.getJsonSchema>[0]>, count: TokenCounter): number => {
  let tokens = 0
  for (const tool of tools) tokens += count(`${tool.name}\n${tool.description ?? ""}\n${JSON.stringify(Tool.getJsonSchema(tool))}`)
  return tokens
}

/** What a request's tool definitions cost, builtin and MCP apart, and what offering MCP tools by name saved. */
export interface ToolsCost {
  /** The builtin tools' definitions (tool_search's among them). */
  readonly builtin: number
  /** The MCP tools' definitions the request carries. */
  readonly mcp: number
  /** MCP tools offered by name only (over `mcpToolBudget`): listed in `<tools>`, their definitions not sent. */
  readonly lazyTools: number
  /** What those definitions would have cost. */
  readonly saved: number
}

/** The cost of a request's tools: `listed` are all it offers, `defined` those whose definitions it carries. */
export const toolsCostOf = (
  listed: ReadonlyArray<RegisteredTool>,
  defined: ReadonlyArray<RegisteredTool>,
  count: TokenCounter
): ToolsCost => {
  const sent = new Set(defined.map((tool) => tool.spec.toolId))
  const tokensOf = (tools: ReadonlyArray<RegisteredTool>) => toolDefinitionsTokens(tools.map(toAiTool), count)
  const lazy = listed.filter((tool) => !sent.has(tool.spec.toolId))
  return {
    builtin: tokensOf(defined.filter((tool) => !isMcpToolId(tool.spec.toolId))),
    mcp: tokensOf(defined.filter((tool) => isMcpToolId(tool.spec.toolId))),
    lazyTools: lazy.length,
    saved: tokensOf(lazy)
  }
}
