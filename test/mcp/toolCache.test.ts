import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describeState } from "../../src/mcp/McpServerState.js"
import { McpServers } from "../../src/mcp/McpServers.js"
import { loadCachedTools, saveCachedTools } from "../../src/mcp/toolCache.js"
import { startServer } from "../channels/web/harness.js"
import { databases } from "../support/databases.js"
import { FakeReply } from "../support/fakeModelServer.js"
import { offeredTools, toolResultsById } from "../support/modelRequests.js"
import { changingServer } from "../support/mcpServers.js"
import { makeTempDir } from "../support/tempDir.js"

// A server started at first use is offered from its cached tool list (kern.db, as it listed its tools when it last
// ran): the model sees its tools before it ever runs in this process, and a call to one starts it and is answered.

const operator = (text: string) => ({ interface: "cli", channel: "terminal", userId: "operator", text })

const starts = (file: string) => NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "").length : 0

describe("first-use MCP servers' cached tools", () => {
  it.live("listed once, then offered at the next start before the server runs; a call starts it and answers", () => {
    const root = makeTempDir("kern-mcp-cache-")
    const dir = NodePath.join(root, "agent")
    const startsFile = NodePath.join(root, "starts")
    const server = changingServer(NodePath.join(root, "tools.json"), [
      { name: "lookup", description: "Looks a word up in the dictionary.", readOnly: true }
    ], { startsFile })
    const config = (start: "agent" | "first-use") => ({ recall: false, mcpServers: { changing: { ...server.config, start } } })
    return Effect.gen(function*() {
      // Never started yet: its tools are unknown, and status says so.
      yield* Effect.scoped(Effect.gen(function*() {
        const { context } = yield* startServer({ dir, config: config("first-use") })
        const [state] = yield* Context.get(context, McpServers).states
        expect(describeState(state!)).toBe("not started (starts at first use; its tools are unknown until then)")
      }))
      expect(starts(startsFile)).toBe(0)

      // Started once with the agent: its list is cached.
      yield* Effect.scoped(Effect.gen(function*() {
        const { context } = yield* startServer({ dir, config: config("agent") })
        yield* Context.get(context, McpServers).ready
      }))
      expect(starts(startsFile)).toBe(1)

      // Started again, the server at first use: the first model request offers its tool before it ran.
      yield* Effect.scoped(Effect.gen(function*() {
        const { context, model, runtime } = yield* startServer({ dir, config: config("first-use") })
        const [before] = yield* Context.get(context, McpServers).states
        yield* model.reply(
          FakeReply.toolCalls([{ id: "c1", name: "mcp__changing__lookup", args: { message: "kern" } }]),
          FakeReply.text("done")
        )
        yield* runtime.submit(operator("look kern up"))
        const [first, second] = yield* model.awaitRequests(2)
        expect(offeredTools(first!.body)).toContain("mcp__changing__lookup")
        expect(describeState(before!)).toBe("not started (starts at first use; 1 tool as it last listed them)")
        // The call started the server and ran on it.
        expect(toolResultsById(second!.body)["c1"]).toContain("lookup: kern")
        expect(starts(startsFile)).toBe(2)
        const [after] = yield* Context.get(context, McpServers).states
        expect(after).toMatchObject({ state: "connected", tools: 1 })
      }))
    })
  })

  it.live("the live list replaces the cached one when the server starts: a tool it dropped is no longer offered", () => {
    const root = makeTempDir("kern-mcp-cache-")
    const dir = NodePath.join(root, "agent")
    const server = changingServer(NodePath.join(root, "tools.json"), [
      { name: "lookup", description: "Looks a word up in the dictionary.", readOnly: true },
      { name: "define", description: "Defines a word.", readOnly: true }
    ])
    const config = (start: "agent" | "first-use") => ({ recall: false, mcpServers: { changing: { ...server.config, start } } })
    return Effect.gen(function*() {
      yield* Effect.scoped(Effect.gen(function*() {
        const { context } = yield* startServer({ dir, config: config("agent") })
        yield* Context.get(context, McpServers).ready
      }))
      server.write([{ name: "lookup", description: "Looks a word up in the dictionary.", readOnly: true }])
      yield* Effect.scoped(Effect.gen(function*() {
        const { context, model, runtime } = yield* startServer({ dir, config: config("first-use") })
        yield* model.reply(
          FakeReply.toolCalls([{ id: "c1", name: "mcp__changing__lookup", args: { message: "kern" } }]),
          FakeReply.text("done"),
          FakeReply.text("again")
        )
        yield* runtime.submit(operator("look kern up"))
        const [first] = yield* model.awaitRequests(2)
        expect(offeredTools(first!.body)).toContain("mcp__changing__define")
        const servers = Context.get(context, McpServers)
        yield* runtime.submit(operator("and now?"))
        const requests = yield* model.awaitRequests(3)
        expect(offeredTools(requests[2]!.body)).toContain("mcp__changing__lookup")
        expect(offeredTools(requests[2]!.body)).not.toContain("mcp__changing__define")
        const [state] = yield* servers.states
        expect(state).toMatchObject({ state: "connected", tools: 1 })
      }))
    })
  })
})

describe.each(databases)("the MCP tool cache, kern.db on $dialect", ({ layer }) => {
  it.effect("keeps what each server listed last; an unreadable row counts as none", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const lookup = { name: "lookup", description: "Looks a word up.", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }
      expect(Option.isNone(yield* loadCachedTools("dict"))).toBe(true)
      yield* saveCachedTools("dict", [lookup])
      yield* saveCachedTools("other", [{ name: "x", inputSchema: {} }])
      expect(yield* loadCachedTools("dict")).toEqual(Option.some([lookup]))
      yield* saveCachedTools("dict", [])
      expect(yield* loadCachedTools("dict")).toEqual(Option.some([]))
      expect(Option.getOrThrow(yield* loadCachedTools("other")).map((tool) => tool.name)).toEqual(["x"])
      yield* sql`UPDATE mcp_tool_cache SET tools = '[{"nope": 1}]' WHERE server = 'other'`
      expect(Option.isNone(yield* loadCachedTools("other"))).toBe(true)
    }).pipe(Effect.provide(layer), Effect.orDie))
})
