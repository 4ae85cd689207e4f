import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { keepsSpans } from "../../src/kernel/spansKept.js"
import { execTool, mcpAgentLayer, taggedProcesses } from "../support/mcpServers.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { conditionBound, eventually } from "../support/waitFor.js"

// A call's lifetime against a real server (mcpWaitingServer.mjs), untraced as an agent without an exporter runs it:
// an MCP tool is self-timed, so such a call runs in the caller's fiber and its timeout and cancellation are the SDK
// request's own, with no timer or fiber of the kernel's.

const waitingAgent = (timeoutMs: number) => {
  const root = makeTempDir("kern-mcp-wait-")
  const dir = NodePath.join(root, "agent")
  const events = NodePath.join(root, "events.log")
  /** The agent's config.json with the waiting server, started as `start` says, slow to start by `startDelayMs`. */
  const configure = (start: "agent" | "first-use", startDelayMs = 0) => {
    const server = {
      command: process.execPath,
      args: [NodePath.resolve("test/support/mcpWaitingServer.mjs")],
      env: { MCP_EVENTS_FILE: events, MCP_START_DELAY_MS: String(startDelayMs) },
      timeoutMs,
      start
    }
    writeFiles(dir, { ".kern/config.json": JSON.stringify({ provider: "openai", model: "test-model", mcpServers: { waiting: server } }) })
  }
  configure("agent")
  /** The lines the server wrote so far: `started <id>`, `progress <id>`, `cancelled <id>`, `answered <id>`. */
  const lines = () => (NodeFs.existsSync(events) ? NodeFs.readFileSync(events, "utf8").split("\n").filter((line) => line !== "") : [])
  const saw = (event: string) => lines().some((line) => line.startsWith(`${event} `))
  return { dir, saw, configure, layer: mcpAgentLayer(dir) }
}

/** Untraced, as the executor runs a call where no tracer keeps spans. */
const untraced = Effect.withFiberRuntime<void>((fiber) => {
  assert.isFalse(keepsSpans(fiber.currentTracer))
  return Effect.void
})

describe("an MCP call's lifetime", () => {
  it.live("a call that outlives timeoutMs is a TIMEOUT naming it, though the tool reports progress, and the server is told to stop", () => {
    const { saw, layer } = waitingAgent(1000)
    return Effect.gen(function*() {
      yield* untraced
      const result = yield* execTool("mcp.waiting.wait", { ms: 30_000 })
      assert.isFalse(result.success)
      assert.strictEqual(result.errorCode, "TIMEOUT", result.errorMessage)
      assert.include(result.errorMessage ?? "", "1000 ms")
      // The tool did report progress (kern asks for it), which did not extend the call.
      assert.isTrue(saw("progress"))
      assert.isTrue(yield* eventually(() => saw("cancelled")))
      assert.isFalse(saw("answered"))
    }).pipe(Effect.provide(layer))
  }, { timeout: 120_000 })

  it.live("a call whose caller is interrupted (a stopped turn) is cancelled on the server; the next call is answered", () => {
    // Its timeout lies past the wait for "cancelled" (conditionBound): only the interrupt's abort, not the SDK's timer,
    // can cancel it in that time.
    const { saw, layer } = waitingAgent(10 * conditionBound)
    return Effect.gen(function*() {
      yield* untraced
      const call = yield* Effect.fork(execTool("mcp.waiting.wait", { ms: 10 * conditionBound }))
      assert.isTrue(yield* eventually(() => saw("started")))
      yield* Fiber.interrupt(call)
      assert.isTrue(yield* eventually(() => saw("cancelled")))
      const next = yield* execTool("mcp.waiting.wait", { ms: 1 })
      assert.isTrue(next.success, next.errorMessage)
      assert.strictEqual(next.data, "waited 1")
    }).pipe(Effect.provide(layer))
  }, { timeout: 120_000 })

  it.live("a call that waits for a first-use server to start is held to timeoutMs too, the wait and the request together", () => {
    const { configure, layer } = waitingAgent(1000)
    return Effect.gen(function*() {
      // Started once with the agent: its tools are cached in kern.db and offered before it runs next time.
      const first = yield* Effect.provide(execTool("mcp.waiting.wait", { ms: 1 }), layer)
      assert.isTrue(first.success, first.errorMessage)
      // Now started at first use, and slower to start than the call may take (its connect timeout is 10 s).
      configure("first-use", 60_000)
      yield* untraced
      const result = yield* Effect.provide(execTool("mcp.waiting.wait", { ms: 1 }), layer)
      assert.isFalse(result.success)
      assert.strictEqual(result.errorCode, "TIMEOUT", result.errorMessage)
      assert.include(result.errorMessage ?? "", "1000 ms")
    })
  }, { timeout: 120_000 })

  it.live("a server killed mid-call: the call fails with NETWORK_ERROR at once, not at its timeout", () => {
    const { dir, saw, layer } = waitingAgent(60_000)
    return Effect.gen(function*() {
      yield* untraced
      const call = yield* Effect.fork(execTool("mcp.waiting.wait", { ms: 60_000 }))
      assert.isTrue(yield* eventually(() => saw("started")))
      for (const pid of taggedProcesses(dir)) process.kill(pid, "SIGKILL")
      const result = yield* Fiber.join(call)
      assert.isFalse(result.success)
      assert.strictEqual(result.errorCode, "NETWORK_ERROR", result.errorMessage)
      assert.include(result.errorMessage ?? "", "closed the connection")
    }).pipe(Effect.provide(layer))
  }, { timeout: 120_000 })
})
