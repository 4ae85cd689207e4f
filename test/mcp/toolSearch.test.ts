import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { RegisteredTool } from "../../src/kernel/ToolRegistry.js"
import { makeRegistry } from "../../src/kernel/ToolRegistry.js"
import { searchMcpTools } from "../../src/mcp/toolSearch.js"

// How tool_search picks MCP tools: exact names first, then words of names, then words of descriptions.

const catalogue = Effect.gen(function*() {
  const registry = yield* makeRegistry
  const tools: Array<RegisteredTool> = []
  for (const [id, description] of [
    ["mcp.gh.create_issue", "Create an issue in a repository."],
    ["mcp.gh.list_issues", "List the issues of a repository, open first."],
    ["mcp.gh.get_pull_request", "Fetch one pull request with its review comments."],
    ["mcp.db.query", "Run a read-only SQL statement against the warehouse."],
    ["mcp.db.list_tables", "List the tables of the warehouse with their row counts."]
  ] as const) {
    tools.push(yield* registry.registerFn({ toolId: id, name: id, description, safetyClass: "READ_ONLY" }, () => Effect.succeed("")))
  }
  return tools
})

const ids = (found: ReadonlyArray<RegisteredTool>) => found.map((tool) => tool.spec.toolId)

describe("tool_search's matching", () => {
  it.effect("exact names (the model's, the id, the server's own) come first, in any mix", () =>
    Effect.gen(function*() {
      const tools = yield* catalogue
      expect(ids(searchMcpTools(tools, { query: "mcp__db__query", limit: 1 }))).toEqual(["mcp.db.query"])
      expect(ids(searchMcpTools(tools, { query: "mcp.gh.create_issue" })).at(0)).toBe("mcp.gh.create_issue")
      expect(ids(searchMcpTools(tools, { query: "list_tables, get_pull_request", limit: 2 })).sort())
        .toEqual(["mcp.db.list_tables", "mcp.gh.get_pull_request"])
    }))

  it.effect("words: of the name weigh more than of the description; a prefix of a name's word counts; nothing found is empty", () =>
    Effect.gen(function*() {
      const tools = yield* catalogue
      expect(ids(searchMcpTools(tools, { query: "issues" }))).toEqual(["mcp.gh.list_issues"])
      expect(ids(searchMcpTools(tools, { query: "issue" }))).toEqual(["mcp.gh.create_issue", "mcp.gh.list_issues"])
      expect(ids(searchMcpTools(tools, { query: "warehouse tables" })).at(0)).toBe("mcp.db.list_tables")
      expect(ids(searchMcpTools(tools, { query: "pull" }))).toEqual(["mcp.gh.get_pull_request"])
      expect(ids(searchMcpTools(tools, { query: "SQL" }))).toEqual(["mcp.db.query"])
      expect(searchMcpTools(tools, { query: "kubernetes pods" })).toEqual([])
    }))
})
