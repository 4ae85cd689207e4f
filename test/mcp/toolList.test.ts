import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { ContractBaselineStore } from "../../src/kernel/ContractBaselineStore.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { McpServers } from "../../src/mcp/McpServers.js"
import { changingServer, type ChangingTool, execTool, mcpAgentLayer, taggedProcesses } from "../support/mcpServers.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { eventuallyEffect } from "../support/waitFor.js"

// A server whose tool list changes while the agent runs (notifications/tools/list_changed) and across a restart:
// the kernel's registry follows it, and a tool it adds goes through the contract check like any other.

const tool = (name: string): ChangingTool => ({ name, description: `The ${name} tool.`, readOnly: true })

const exec = execTool

const mcpIds = Effect.map(Effect.flatMap(ToolRegistry, (registry) => registry.listIds), (ids) =>
  ids.filter((id) => id.startsWith("mcp.")).join(","))

describe("a server's tool list changes", () => {
  it.live("list_changed and a restart: dropped tools are unregistered, new ones registered and fingerprint-checked", () => {
    const dir = NodePath.join(makeTempDir("kern-mcp-list-"), "agent")
    const server = changingServer(NodePath.join(dir, "..", "tools.json"), [tool("alpha"), tool("beta")])
    writeFiles(dir, {
      ".kern/config.json": JSON.stringify({
        provider: "openai",
        model: "test-model",
        contractEnforcement: "enforce",
        mcpServers: { changing: server.config }
      })
    })
    const layer = mcpAgentLayer(dir)
    return Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const servers = yield* McpServers
      assert.strictEqual(yield* mcpIds, "mcp.changing.alpha,mcp.changing.beta")
      yield* (yield* ContractBaselineStore).snapshot("kernel", yield* registry.listAll, "operator")

      // While it runs: beta dropped, gamma added.
      server.write([tool("alpha"), tool("gamma")])
      assert.isTrue(yield* eventuallyEffect(Effect.map(mcpIds, (ids) => ids === "mcp.changing.alpha,mcp.changing.gamma")))
      const states = yield* servers.states
      assert.strictEqual(states[0]?.tools, 2)
      assert.deepStrictEqual((yield* servers.tools("changing")).map((listed) => listed.name).sort(), ["alpha", "gamma"])
      const gone = yield* exec("mcp.changing.beta", { message: "x" })
      assert.strictEqual(gone.errorCode, "NOT_FOUND")
      const fresh = yield* exec("mcp.changing.gamma", { message: "x" })
      assert.strictEqual(fresh.errorCode, "PERMISSION_DENIED")
      assert.include(fresh.errorMessage ?? "", "mcp.changing.gamma is new and not approved yet")
      const alpha = yield* exec("mcp.changing.alpha", { message: "x" })
      assert.isTrue(alpha.success, alpha.errorMessage)

      // Across a restart: the server is frozen (it sees no change), its file changed, then it is killed; it comes
      // back offering only alpha.
      const before = taggedProcesses(dir)
      assert.isNotEmpty(before)
      for (const pid of before) process.kill(pid, "SIGSTOP")
      server.write([tool("alpha")])
      for (const pid of before) process.kill(pid, "SIGKILL")
      assert.isTrue(yield* eventuallyEffect(Effect.map(servers.states, (now) => now[0]?.connections === 2 && now[0].state === "connected")))
      assert.strictEqual(yield* mcpIds, "mcp.changing.alpha")
    }).pipe(Effect.provide(layer))
  }, { timeout: 120_000 })
})
