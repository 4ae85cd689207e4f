import { describe, expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import * as NodePath from "node:path"
import { lazyToolsHeading } from "../../src/context/systemPrompt.js"
import { McpServers } from "../../src/mcp/McpServers.js"
import { bearer, request, startServer } from "../channels/web/harness.js"
import { FakeReply, type RecordedRequest } from "../support/fakeModelServer.js"
import { offeredTools, toolResultsById } from "../support/modelRequests.js"

// 120 MCP tools with real schemas (test/support/manyToolsServer.mjs, the official SDK's server) cost far more than
// mcpToolBudget (10% of maxContextTokens): the model is offered their names and tool_search, which loads the
// definitions of the tools it picks for the rest of the turn.

const manyTools = { command: process.execPath, args: [NodePath.resolve("test/support/manyToolsServer.mjs")] }

const mcpOffered = (recorded: RecordedRequest) => offeredTools(recorded.body).filter((name) => name.startsWith("mcp__"))

const systemPrompt = (recorded: RecordedRequest): string => {
  const messages = (recorded.body as { readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }> }).messages
  const system = messages.find((message) => message.role === "system")
  return typeof system?.content === "string" ? system.content : JSON.stringify(system?.content)
}

const agent = (config: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const server = yield* startServer({ config: { recall: false, mcpServers: { many: manyTools }, ...config } })
    yield* Context.get(server.context, McpServers).ready
    const [state] = yield* Context.get(server.context, McpServers).states
    expect(state).toMatchObject({ name: "many", state: "connected", tools: 120 })
    return server
  })

const operator = (text: string) => ({ interface: "cli", channel: "terminal", userId: "operator", text })

describe("lazy MCP tools", () => {
  it.live("over the budget: names and tool_search first; the picked tools' schemas after the search, for the rest of the turn; the next turn starts lazy again", () =>
    Effect.scoped(Effect.gen(function*() {
      const { model, runtime } = yield* agent()
      yield* model.reply(
        FakeReply.toolCalls([{ id: "s1", name: "tool_search", args: { query: "get_invoice, get_refund", limit: 2 } }]),
        FakeReply.toolCalls([{ id: "c1", name: "mcp__many__get_invoice", args: { id: "7" } }]),
        FakeReply.text("invoice 7 is paid"),
        FakeReply.text("hello again")
      )
      yield* runtime.submit(operator("is invoice 7 paid?"))
      const [first, second, third] = yield* model.awaitRequests(3)

      // The first request: builtin definitions and tool_search, no MCP definition; every MCP tool named in <tools>.
      expect(offeredTools(first!.body)).toContain("tool_search")
      expect(offeredTools(first!.body)).toContain("read")
      expect(mcpOffered(first!)).toEqual([])
      const prompt = systemPrompt(first!)
      expect(prompt).toContain(lazyToolsHeading)
      expect(prompt).toContain("mcp__many__get_invoice: Fetch one invoice by its id, with every field the ledger keeps for it.")
      expect(prompt).toContain("mcp__many__archive_forecast: Archive a forecast")

      // After the search: the picked tools' schemas, and only theirs.
      const searched = toolResultsById(second!.body)["s1"] ?? ""
      expect(searched).toContain("Loaded 2 tools")
      expect(searched).toContain("- mcp__many__get_invoice: Fetch one invoice by its id")
      const loaded = mcpOffered(second!)
      expect([...loaded].sort()).toEqual(["mcp__many__get_invoice", "mcp__many__get_refund"])
      const definition = ((second!.body as { tools: ReadonlyArray<{ function: { name: string; parameters: unknown } }> }).tools)
        .find((tool) => tool.function.name === "mcp__many__get_invoice")
      expect(definition?.function.parameters).toMatchObject({ properties: { id: { type: "string" }, limit: { type: "integer" } } })
      // The system prompt did not change within the turn: its cached prefix holds.
      expect(systemPrompt(second!)).toBe(prompt)

      // The loaded tool ran, and stays offered for the rest of the turn.
      expect(toolResultsById(third!.body)["c1"]).toContain(`get_invoice {"id":"7"}`)
      expect(mcpOffered(third!)).toEqual(loaded)

      // The next turn starts lazy again.
      yield* runtime.submit(operator("thanks"))
      const requests = yield* model.awaitRequests(4)
      expect(mcpOffered(requests[3]!)).toEqual([])
      expect(offeredTools(requests[3]!.body)).toContain("tool_search")
    })))

  it.live("a lazy tool called by name before any search runs, checked against its schema, and is loaded from the next step on", () =>
    Effect.scoped(Effect.gen(function*() {
      const { model, runtime } = yield* agent()
      yield* model.reply(
        FakeReply.toolCalls([
          { id: "c1", name: "mcp__many__list_refund", args: { id: "r1", limit: 3 } },
          { id: "c2", name: "mcp__many__get_refund", args: { limit: "many" } }
        ]),
        FakeReply.text("done")
      )
      yield* runtime.submit(operator("refunds?"))
      const [first, second] = yield* model.awaitRequests(2)
      expect(mcpOffered(first!)).toEqual([])
      const results = toolResultsById(second!.body)
      expect(results["c1"]).toContain(`list_refund {"id":"r1","limit":3}`)
      expect(results["c2"]).toContain("VALIDATION_ERROR")
      expect(mcpOffered(second!).sort()).toEqual(["mcp__many__get_refund", "mcp__many__list_refund"])
    })))

  it.live("under the budget every MCP definition is sent and tool_search is not offered; context show's route counts builtin and MCP apart", () =>
    Effect.scoped(Effect.gen(function*() {
      const { model, runtime, base } = yield* agent({ mcpToolBudget: 1 })
      yield* model.reply(FakeReply.text("hi"))
      yield* runtime.submit(operator("hello"))
      const [first] = yield* model.awaitRequests(1)
      expect(mcpOffered(first!)).toHaveLength(120)
      expect(offeredTools(first!.body)).not.toContain("tool_search")
      expect(systemPrompt(first!)).not.toContain(lazyToolsHeading)
      const next = yield* request(`${base}/context/segments`, { headers: bearer })
      const cost = (next.json as { toolsCost: { builtin: number; mcp: number; lazyTools: number; saved: number } }).toolsCost
      expect(cost.mcp).toBeGreaterThan(10_000)
      expect(cost.builtin).toBeGreaterThan(1_000)
      expect(cost).toMatchObject({ lazyTools: 0, saved: 0 })
    })))

  it.live("context show's route over the budget: what offering MCP tools by name saved", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* agent()
      const next = yield* request(`${base}/context/segments`, { headers: bearer })
      const body = next.json as { tokens: { tools: number }; toolsCost: { builtin: number; mcp: number; lazyTools: number; saved: number } }
      expect(body.toolsCost.mcp).toBe(0)
      expect(body.toolsCost.lazyTools).toBe(120)
      expect(body.toolsCost.saved).toBeGreaterThan(10_000)
      expect(body.tokens.tools).toBe(body.toolsCost.builtin)
    })))
})
