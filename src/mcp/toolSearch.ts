import { Effect, Ref, Schema } from "effect"
import { modelToolName } from "../kernel/aiTools.js"
import { isMcpToolId } from "../kernel/mcpToolId.js"
import { RunContext } from "../kernel/RunContext.js"
import { type RegisteredTool, ToolRegistry } from "../kernel/ToolRegistry.js"
import { allowsTool, scopeTag } from "../kernel/toolScope.js"
import { firstSentence } from "../context/systemPrompt.js"

// tool_search: when the MCP tools' definitions would take more of the context than `mcpToolBudget` allows, a turn
// offers them by name (the system prompt's <tools>) and this tool loads the definitions of the ones the model picks,
// for the rest of the turn (RunContext.loadedTools; the turn reads it before each step: src/turn/offeredTools.ts).

export const toolSearchId = "tool_search"

/** At most this many tools are loaded by one search. */
const maxLimit = 20
const defaultLimit = 5

export const ToolSearchArgs = Schema.Struct({
  query: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "Words to look for in the tools' names and descriptions, or the exact names of the tools to load " +
      "(separated by spaces or commas)"
  }),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, maxLimit)).annotations({
    description: `The most tools to load (default ${defaultLimit})`
  }))
})
export type ToolSearchArgs = typeof ToolSearchArgs.Type

export const toolSearchDescription =
  "Load MCP tools that are listed by name only (in <tools>, after \"Load with tool_search\"): finds them by their " +
  "names or by words of what they do, and offers their full definitions from your next step on, for the rest of " +
  "this turn. Call a listed tool only after it is loaded."

const words = (text: string): ReadonlyArray<string> => text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word !== "")

/** How well a tool matches: an exact name wins; then words of its name, then words of its description. */
const scoreOf = (tool: RegisteredTool, terms: ReadonlyArray<string>, query: ReadonlyArray<string>): number => {
  const name = modelToolName(tool.spec.toolId)
  const exact = [name, tool.spec.toolId, tool.spec.toolId.split(".").slice(2).join(".")]
  if (terms.some((term) => exact.includes(term))) return 1_000
  const nameWords = words(tool.spec.toolId.split(".").slice(1).join(" "))
  const descriptionWords = new Set(words(tool.spec.description))
  let score = 0
  for (const word of query) {
    if (nameWords.includes(word)) score += 3
    else if (word.length >= 3 && nameWords.some((part) => part.startsWith(word))) score += 2
    if (descriptionWords.has(word)) score += 1
  }
  return score
}

const parametersLine = (tool: RegisteredTool): string => {
  const args = tool.spec.argsSchema
  if (args.length === 0) return "no parameters"
  return `parameters: ${args.map((arg) => `${arg.name} (${arg.type}${arg.required ? ", required" : ""})`).join(", ")}`
}

/** The MCP tools a run's user may call that match `args`, best first. */
export const searchMcpTools = (tools: ReadonlyArray<RegisteredTool>, args: ToolSearchArgs): ReadonlyArray<RegisteredTool> => {
  const terms = args.query.toLowerCase().split(/[\s,]+/).filter((term) => term !== "")
  const query = words(args.query)
  return tools
    .map((tool) => ({ tool, score: scoreOf(tool, terms, query) }))
    .filter((match) => match.score > 0)
    .sort((a, b) => b.score - a.score || (a.tool.spec.toolId < b.tool.spec.toolId ? -1 : 1))
    .slice(0, args.limit ?? defaultLimit)
    .map((match) => match.tool)
}

const resultText = (found: ReadonlyArray<RegisteredTool>, query: string, inTurn: boolean): string => {
  if (found.length === 0) {
    return `No MCP tool matches "${query}": the tools you can load are listed in <tools> after "Load with tool_search"; ` +
      "search again with words of their names."
  }
  const head = inTurn
    ? `Loaded ${found.length} tool${found.length === 1 ? "" : "s"}: call ${found.length === 1 ? "it" : "them"} from your next step on (their full definitions are offered for the rest of this turn).`
    : `Found ${found.length} tool${found.length === 1 ? "" : "s"} (outside a turn nothing is loaded).`
  const lines = found.map((tool) => `- ${modelToolName(tool.spec.toolId)}: ${firstSentence(tool.spec.description)} (${parametersLine(tool)})`)
  return [head, ...lines].join("\n")
}

/** tool_search({ query, limit? }): finds MCP tools and loads them into the run's turn. */
export const toolSearch = (registry: ToolRegistry["Type"]) =>
  Effect.fn("kern.tools.toolSearch")(function*(args: ToolSearchArgs) {
    const ctx = yield* RunContext
    const scope = ctx.toolScope
    const candidates = (yield* registry.listTools).filter((tool) =>
      isMcpToolId(tool.spec.toolId) && (scope === undefined || allowsTool(scope, tool.spec)))
    const found = searchMcpTools(candidates, args)
    const ids = found.map((tool) => tool.spec.toolId)
    if (ctx.loadedTools !== undefined) yield* Ref.update(ctx.loadedTools, (loaded) => new Set([...loaded, ...ids]))
    return { loaded: found.map((tool) => modelToolName(tool.spec.toolId)), text: resultText(found, args.query, ctx.loadedTools !== undefined) }
  })

/** Registers tool_search: done by the MCP servers' layer when the agent has any, since only their tools are lazy. */
export const registerToolSearch = (registry: ToolRegistry["Type"]) =>
  registry.register(
    {
      toolId: toolSearchId,
      name: "Tool search",
      description: toolSearchDescription,
      safetyClass: "READ_ONLY",
      idempotent: true,
      timeoutMs: 5_000,
      sideEffectLevel: "none",
      riskTags: [scopeTag("read")]
    },
    { parameters: ToolSearchArgs, handler: toolSearch(registry) }
  )
