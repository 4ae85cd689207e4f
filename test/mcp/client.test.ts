import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { McpServers } from "../../src/mcp/McpServers.js"
import { everythingBin, everythingOverHttp, execTool, filesystemBin, mcpAgentLayer, taggedProcesses } from "../support/mcpServers.js"
import { recordingTracer } from "../support/recordingTracer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { eventually } from "../support/waitFor.js"

// kern's MCP client against the reference servers, through the kernel: what the model's calls would go through.

const secret = "mcp-secret-token-0123456789abcdef"

const agentWith = (mcpServers: Record<string, unknown>, files: Readonly<Record<string, string>> = {}) => {
  const dir = NodePath.join(makeTempDir("kern-mcp-"), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ provider: "openai", model: "test-model", mcpServers }),
    ".kern/.env": `MCP_TOKEN=${secret}\n`,
    ...files
  })
  return { dir, layer: mcpAgentLayer(dir) }
}

const exec = execTool

const text = (data: unknown) => (typeof data === "string" ? data : JSON.stringify(data))

const everythingStdio = { command: everythingBin, args: ["stdio"], env: { API_TOKEN: "${MCP_TOKEN}" } }

/** The same checks over each transport: listing, several kinds of tools, an error, progress. */
const toolKinds = (name: string, server: () => Effect.Effect<Record<string, unknown>, never, import("effect").Scope.Scope>) =>
  it.live(`${name}: tools listed and called through the kernel, results and errors mapped`, () =>
    Effect.scoped(Effect.gen(function*() {
      const { layer } = agentWith({ everything: yield* server() })
      yield* Effect.gen(function*() {
        const states = yield* (yield* McpServers).states
        assert.strictEqual(states[0]?.state, "connected", JSON.stringify(states))
        assert.isAbove(states[0]?.tools ?? 0, 5)
        const registry = yield* ToolRegistry
        const ids = yield* registry.listIds
        for (const id of ["mcp.everything.echo", "mcp.everything.get-sum", "mcp.everything.get-tiny-image"]) {
          assert.include(ids, id)
        }

        const echo = yield* exec("mcp.everything.echo", { message: "hello kern" })
        assert.isTrue(echo.success, echo.errorMessage)
        assert.include(text(echo.data), "hello kern")

        const sum = yield* exec("mcp.everything.get-sum", { a: 2, b: 40 })
        assert.isTrue(sum.success, sum.errorMessage)
        assert.include(text(sum.data), "42")

        const image = yield* exec("mcp.everything.get-tiny-image", {})
        assert.isTrue(image.success, image.errorMessage)
        assert.match(text(image.data), /\[image: image\/png, \d+ bytes, not shown\]/)

        const structured = yield* exec("mcp.everything.get-structured-content", { location: "Chicago" })
        assert.isTrue(structured.success, structured.errorMessage)
        assert.include(text(structured.data), "\"temperature\"")

        // A location the tool's own schema refuses: the server's error reaches the caller as an error result.
        const refused = yield* exec("mcp.everything.get-structured-content", { location: "Atlantis" })
        assert.isFalse(refused.success)
        assert.include(refused.errorMessage ?? "", "get-structured-content")

        const long = yield* exec("mcp.everything.trigger-long-running-operation", { duration: 1, steps: 4 })
        assert.isTrue(long.success, long.errorMessage)
        assert.include(text(long.data), "completed")
      }).pipe(Effect.provide(layer))
    })), { timeout: 120_000 })

describe("MCP client", () => {
  toolKinds("stdio", () => Effect.succeed(everythingStdio))
  toolKinds("Streamable HTTP", () => Effect.map(everythingOverHttp, ({ url }) => ({ url })))

  it.live("a secret named in env reaches the server, never the caller: the kernel redacts it from results", () => {
    const { layer } = agentWith({ everything: everythingStdio })
    return Effect.gen(function*() {
      const result = yield* exec("mcp.everything.get-env", {})
      assert.isTrue(result.success, result.errorMessage)
      const shown = text(result.data)
      assert.notInclude(shown, secret)
      assert.include(shown, "[redacted:MCP_TOKEN]")
    }).pipe(Effect.provide(layer))
  }, { timeout: 120_000 })

  it.live("server-filesystem: a read-only tool and a write tool with their safety classes; a read-scope user is refused the destructive one", () => {
    const { dir, layer } = agentWith({}, { "shared/hello.txt": "hello from the file\n" })
    const shared = NodePath.join(dir, "shared")
    const config = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8"))
    NodeFs.writeFileSync(
      NodePath.join(dir, ".kern/config.json"),
      JSON.stringify({ ...config, mcpServers: { files: { command: filesystemBin, args: [shared] } } })
    )
    return Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const read = Option.getOrThrow(yield* registry.get("mcp.files.read_text_file"))
      const write = Option.getOrThrow(yield* registry.get("mcp.files.write_file"))
      assert.strictEqual(read.spec.safetyClass, "READ_ONLY")
      assert.strictEqual(write.spec.safetyClass, "DESTRUCTIVE")

      const content = yield* exec("mcp.files.read_text_file", { path: NodePath.join(shared, "hello.txt") }, "read")
      assert.isTrue(content.success, content.errorMessage)
      assert.include(text(content.data), "hello from the file")

      const target = NodePath.join(shared, "new.txt")
      const refused = yield* exec("mcp.files.write_file", { path: target, content: "x" }, "read")
      assert.isFalse(refused.success)
      assert.strictEqual(refused.errorCode, "PERMISSION_DENIED")
      assert.isFalse(NodeFs.existsSync(target))

      const written = yield* exec("mcp.files.write_file", { path: target, content: "written by kern" })
      assert.isTrue(written.success, written.errorMessage)
      assert.strictEqual(NodeFs.readFileSync(target, "utf8"), "written by kern")
    }).pipe(Effect.provide(layer))
  }, { timeout: 120_000 })

  it.live("a server that cannot start is shown failed with its reason; the kernel and the other servers go on", () => {
    const { layer } = agentWith({
      broken: { command: "/nonexistent/mcp-server" },
      everything: everythingStdio
    })
    return Effect.gen(function*() {
      const states = yield* (yield* McpServers).states
      const broken = states.find((state) => state.name === "broken")
      assert.strictEqual(broken?.state, "failed")
      assert.include(broken?.reason ?? "", "ENOENT")
      assert.strictEqual(states.find((state) => state.name === "everything")?.state, "connected")
      const echo = yield* exec("mcp.everything.echo", { message: "still here" })
      assert.isTrue(echo.success, echo.errorMessage)
      const builtin = yield* exec("glob", { pattern: "*" })
      assert.isTrue(builtin.success, builtin.errorMessage)
    }).pipe(Effect.provide(layer))
  }, { timeout: 120_000 })

  it.live("a server killed mid-call: the call fails clearly, the server is restarted, no process of it remains", () => {
    const { dir, layer } = agentWith({ everything: everythingStdio })
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const first = taggedProcesses(dir)
        assert.isNotEmpty(first)
        const call = yield* Effect.fork(
          exec("mcp.everything.trigger-long-running-operation", { duration: 50, steps: 50 })
        )
        // Once the call's request is out, kill every process of the server.
        assert.isTrue(yield* eventually(() => spans.some((span) => span.name === "kern.mcp.call")))
        for (const pid of first) process.kill(pid, "SIGKILL")
        const result = yield* Fiber.join(call)
        assert.isFalse(result.success)
        assert.strictEqual(result.errorCode, "NETWORK_ERROR")
        assert.include(result.errorMessage ?? "", "closed the connection")
        const servers = yield* McpServers
        const restarted = yield* eventually(() => {
          const now = taggedProcesses(dir)
          return now.length > 0 && now.every((pid) => !first.includes(pid))
        })
        assert.isTrue(restarted)
        yield* Effect.promise(() => pollConnected(servers))
        const echo = yield* exec("mcp.everything.echo", { message: "back" })
        assert.isTrue(echo.success, echo.errorMessage)
      }).pipe(Effect.provide(layer), Effect.withTracer(tracer))
      // The agent's scope is closed: nothing the server started is left.
      assert.deepStrictEqual(taggedProcesses(dir), [])
    })
  }, { timeout: 120_000 })
})

/** Waits until the server's second connection is up. */
const pollConnected = async (servers: McpServers["Type"]) => {
  for (let i = 0; i < 3000; i++) {
    const states = await Effect.runPromise(servers.states)
    if (states[0]?.state === "connected" && states[0].connections >= 2) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error("the server was not restarted")
}
