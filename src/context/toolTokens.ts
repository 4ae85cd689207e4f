import { Tool } from "@effect/ai"
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
