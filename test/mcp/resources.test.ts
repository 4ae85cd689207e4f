import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { RunToolScope } from "../../src/kernel/toolScope.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { runKern } from "../support/cli.js"
import { changingServer, everythingBin, execTool, mcpAgentLayer } from "../support/mcpServers.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// MCP resources through the kernel's `mcp_resource` tool, and prompts through `kern mcp prompts`, against
// server-everything (which offers both); a server without resources leaves the tool unregistered.

const agentWith = (mcpServers: Record<string, unknown>) => {
  const dir = NodePath.join(makeTempDir("kern-mcp-res-"), "agent")
  writeFiles(dir, { ".kern/config.json": JSON.stringify({ provider: "openai", model: "test-model", mcpServers }) })
  return { dir, layer: mcpAgentLayer(dir) }
}

const exec = (args: unknown, toolScope?: RunToolScope) => execTool("mcp_resource", args, toolScope)

const text = (data: unknown) => (typeof data === "string" ? data : JSON.stringify(data))

const everything = { command: NodeFs.realpathSync(everythingBin), args: ["stdio"] }

describe("MCP resources and prompts", () => {
  it.live("mcp_resource lists servers and resources and reads text and blob resources, for a read-scope user too", () => {
    const { layer } = agentWith({ everything })
    return Effect.gen(function*() {
      const registered = (yield* (yield* ToolRegistry).get("mcp_resource"))
      assert.isTrue(registered._tag === "Some")

      const servers = yield* exec({})
      assert.isTrue(servers.success, servers.errorMessage)
      assert.include(text(servers.data), "everything")

      const listing = yield* exec({ server: "everything" }, "read")
      assert.isTrue(listing.success, listing.errorMessage)
      const listed = text(listing.data)
      assert.include(listed, "demo://resource/static/document/")
      assert.include(listed, "demo://resource/dynamic/text/{resourceId}")

      const uri = /demo:\/\/resource\/static\/document\/\S+/.exec(listed)?.[0] ?? ""
      const document = yield* exec({ server: "everything", uri })
      assert.isTrue(document.success, document.errorMessage)
      assert.include(text(document.data), `[resource ${uri}]`)
      assert.isAbove(text(document.data).length, uri.length + 20)

      const blob = yield* exec({ server: "everything", uri: "demo://resource/dynamic/blob/1" })
      assert.isTrue(blob.success, blob.errorMessage)
      assert.match(text(blob.data), /\[resource demo:\/\/resource\/dynamic\/blob\/1: [^,]+, \d+ bytes, not shown\]/)

      const missing = yield* exec({ server: "everything", uri: "demo://nothing/here" })
      assert.isFalse(missing.success)
      assert.include(missing.errorMessage ?? "", "everything")

      const unknown = yield* exec({ server: "nope" })
      assert.strictEqual(unknown.errorCode, "NOT_FOUND")
      assert.include(unknown.errorMessage ?? "", "offers no resources")

      const bad = yield* exec({ server: 3 })
      assert.strictEqual(bad.errorCode, "VALIDATION_ERROR")
    }).pipe(Effect.provide(layer))
  }, { timeout: 120_000 })

  it.live("a server without resources: mcp_resource is not registered", () => {
    const dir = makeTempDir("kern-mcp-res-")
    const { layer } = agentWith({ changing: changingServer(NodePath.join(dir, "tools.json"), [{ name: "a", description: "A." }]).config })
    return Effect.gen(function*() {
      const ids = yield* (yield* ToolRegistry).listIds
      assert.include(ids, "mcp.changing.a")
      assert.notInclude(ids, "mcp_resource")
    }).pipe(Effect.provide(layer))
  }, { timeout: 120_000 })

  it("kern mcp prompts lists each server's prompts with their arguments", async () => {
    const { dir } = agentWith({ everything })
    const json = await runKern(["mcp", "prompts", "everything", dir, "--json"])
    assert.strictEqual(json.status, 0, json.stderr)
    const rows = JSON.parse(json.stdout) as ReadonlyArray<{ server: string; prompt: string; arguments: ReadonlyArray<{ name: string; required: boolean }> }>
    assert.isAbove(rows.length, 1)
    assert.isTrue(rows.every((row) => row.server === "everything"))
    assert.isTrue(rows.some((row) => row.arguments.some((arg) => arg.required)), JSON.stringify(rows))
    const shown = await runKern(["mcp", "prompts", "--dir", dir])
    assert.strictEqual(shown.status, 0, shown.stderr)
    assert.match(shown.stdout, /everything +\S+/)
    const unknown = await runKern(["mcp", "prompts", "nope", dir])
    assert.strictEqual(unknown.status, 1)
    assert.include(unknown.stderr, "no such server")
  }, 180_000)
})
