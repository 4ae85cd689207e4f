import { assert, describe, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { everythingBin } from "../support/mcpServers.js"
import { runKern } from "../support/cli.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// `kern mcp` as a user runs it: the real binary, a real server over stdio, one that cannot start.

const agent = () => {
  const dir = NodePath.join(makeTempDir("kern-cli-mcp-"), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({
      provider: "openai",
      model: "test-model",
      mcpServers: {
        everything: { command: NodeFs.realpathSync(everythingBin), args: ["stdio"], tools: ["echo", "get-sum"] },
        broken: { command: "/nonexistent/mcp-server" },
        off: { url: "http://127.0.0.1:1/mcp", enabled: false }
      }
    })
  })
  return dir
}

describe("kern mcp", () => {
  it("list shows each server's state; tools its tools; call runs one through the kernel", async () => {
    const dir = agent()
    const list = await runKern(["mcp", "list", dir, "--json"])
    assert.strictEqual(list.status, 0, list.stderr)
    const states = JSON.parse(list.stdout) as ReadonlyArray<{ name: string; state: string; tools: number; reason?: string }>
    // The allow list lets two of the server's tools through.
    assert.deepInclude(states.find((s) => s.name === "everything"), { state: "connected", tools: 2 })
    assert.strictEqual(states.find((s) => s.name === "broken")?.state, "failed")
    assert.include(states.find((s) => s.name === "broken")?.reason ?? "", "ENOENT")
    assert.strictEqual(states.find((s) => s.name === "off")?.state, "disabled")

    const tools = await runKern(["mcp", "tools", "everything", dir])
    assert.strictEqual(tools.status, 0, tools.stderr)
    assert.include(tools.stdout, "mcp.everything.echo")
    assert.include(tools.stdout, "(not in the allow list)")

    const call = await runKern(["mcp", "call", "everything", "get-sum", dir, "--args", "{\"a\": 20, \"b\": 22}"])
    assert.strictEqual(call.status, 0, call.stderr)
    assert.include(call.stdout, "42")

    const unknown = await runKern(["mcp", "tools", "nope", dir])
    assert.strictEqual(unknown.status, 1)
    assert.include(unknown.stderr, "no such server")
  }, 180_000)

  it("kern status names the configured servers while no agent runs (their state needs the running agent)", async () => {
    const status = await runKern(["status", agent()])
    assert.match(status.stdout, /^mcp: +3 servers configured \(everything, broken, off\); their state shows while the agent runs$/m)
    const json = await runKern(["status", agent(), "--json"])
    assert.strictEqual((JSON.parse(json.stdout) as { mcpServers: unknown }).mcpServers, null)
  }, 180_000)

  it("a bad server in the config is a usage error naming it", async () => {
    const dir = NodePath.join(makeTempDir("kern-cli-mcp-"), "agent")
    writeFiles(dir, { ".kern/config.json": JSON.stringify({ mcpServers: { gh: { command: "x", timeoutMs: "soon" } } }) })
    const list = await runKern(["mcp", "list", dir])
    assert.strictEqual(list.status, 2)
    assert.include(list.stderr, "mcpServers.gh.timeoutMs")
  }, 180_000)
})
