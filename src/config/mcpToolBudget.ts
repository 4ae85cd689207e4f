import { Schema } from "effect"

/**
 * `mcpToolBudget`: the share of `maxContextTokens` the MCP tools' definitions may take. Above it, a turn offers their
 * names and one-line descriptions, and `tool_search` loads the definitions of the tools the model picks.
 */
export const McpToolBudget = Schema.optionalWith(
  Schema.Number.pipe(Schema.between(0, 1)).annotations({ identifier: "a number from 0 to 1" }),
  { default: () => 0.1 }
)

export const mcpToolBudgetExpectation =
  "a number from 0 to 1 (the share of maxContextTokens MCP tool definitions may take before they are loaded on demand; 0: always, 1: never)"
