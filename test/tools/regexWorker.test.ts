import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref } from "effect"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { spawnSync } from "node:child_process"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { ArtifactStore } from "../../src/tools/ArtifactStore.js"
import { grep, GrepArgs } from "../../src/tools/grep.js"
import { guardBacktracking } from "../../src/tools/regexGuard.js"
import { lineMatcher, matchingLines, runsInLinearTime } from "../../src/tools/regexWorker.js"
import { retrieveToolOutput, RetrieveToolOutputArgs } from "../../src/tools/retrieveToolOutput.js"
import { inRun, kernelLayer } from "../kernel/harness.js"
import { makeWorkspace, toolsLayer } from "./support.js"
import { eventually } from "../support/waitFor.js"

// Backtracks for longer than the age of the universe on a line of 5,000 a's, and V8's linear engine cannot run it.
const backreference = "(a|a)*\\1b"
// No backreference, but a counted repetition too large for the linear engine: the V8 guard does not cover it.
const countedRepetition = "(a{1,30})+$"

const threads = () => Number(/^Threads:\s+(\d+)/m.exec(NodeFs.readFileSync("/proc/self/status", "utf8"))?.[1])

/** Counts 20 ms ticks until interrupted: a frozen event loop counts none. */
const ticker = (ticks: Ref.Ref<number>) =>
  Effect.forever(Effect.zipRight(Effect.sleep("20 millis"), Ref.update(ticks, (n) => n + 1)))

const execute = (toolId: string, args: unknown) => Effect.flatMap(ToolExecutor, (executor) => executor.execute(toolId, args))

describe("regular expressions the linear engine cannot run", () => {
  const root = makeWorkspace({
    "long.txt": `${"a".repeat(5000)}\n`,
    "short.txt": `${"a".repeat(40)}!\n`,
    "words.txt": "hello\nworld\nbook keeper\nxy\n"
  })
  const layer = kernelLayer().pipe(Layer.provideMerge(toolsLayer(root, {}, { memoryDb: true })))
  /** grep and retrieve_tool_output in a real kernel, with a short timeout. */
  const register = Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const spec = { timeoutMs: 1500, maxRetries: 0, safetyClass: "READ_ONLY", idempotent: true } as const
    yield* registry.register({ toolId: "grep", name: "Grep", ...spec }, { parameters: GrepArgs, handler: grep })
    yield* registry.register({ toolId: "retrieve_tool_output", name: "RetrieveToolOutput", ...spec }, {
      parameters: RetrieveToolOutputArgs,
      handler: retrieveToolOutput
    })
  })

  /** Runs a call while a ticker runs; the worker thread must be gone shortly after. */
  const timedOut = (toolId: string, args: unknown) =>
    Effect.gen(function*() {
      yield* register
      const before = threads()
      const ticks = yield* Ref.make(0)
      const counting = yield* Effect.fork(ticker(ticks))
      const result = yield* inRun(execute(toolId, args))
      yield* Fiber.interrupt(counting)
      yield* eventually(() => threads() <= before)
      return { result, ticks: yield* Ref.get(ticks), before, after: threads() }
    })

  it.effect("V8 says which patterns its linear engine runs, once the guard set its flags", () =>
    Effect.zipRight(guardBacktracking, Effect.sync(() => {
    assert.isTrue(runsInLinearTime("(a+)+$", ""))
    assert.isTrue(runsInLinearTime("TODO|FIXME", ""))
    assert.isFalse(runsInLinearTime(backreference, ""))
    assert.isFalse(runsInLinearTime("(?<=x)y", ""))
    assert.isFalse(runsInLinearTime("x(?!y)", ""))
    assert.isFalse(runsInLinearTime("(?<w>o)\\k<w>", ""))
    assert.isFalse(runsInLinearTime(countedRepetition, ""))
  })))

  for (const [toolId, pattern, path] of [
    ["grep", backreference, "long.txt"],
    ["grep", backreference, "."],
    ["grep", countedRepetition, "short.txt"]
  ] as const) {
    it.live(`grep ${pattern} on ${path} is a TIMEOUT at the tool's timeout; the runtime keeps running meanwhile`, () =>
      Effect.gen(function*() {
        const { after, before, result, ticks } = yield* timedOut(toolId, { pattern, path })
        assert.strictEqual(result.errorCode, "TIMEOUT")
        assert.include(result.errorMessage, "grep timed out after 1500 ms")
        // 1.5 s of 20 ms ticks: a blocked event loop would count none.
        assert.isAbove(ticks, 10)
        assert.isAtMost(after, before, "the worker thread is still running")
      }).pipe(Effect.provide(layer)))
  }

  it.live("retrieve_tool_output with a backreference grep is a TIMEOUT; the runtime keeps running meanwhile", () =>
    Effect.gen(function*() {
      const store = yield* ArtifactStore
      const stored = yield* store.put({ sessionId: "s", toolId: "bash", text: `start\n${"a".repeat(5000)}\nend\n` })
      const { after, before, result, ticks } = yield* timedOut("retrieve_tool_output", {
        artifactId: stored.artifactId,
        grep: backreference
      })
      assert.strictEqual(result.errorCode, "TIMEOUT")
      assert.include(result.errorMessage, "retrieve_tool_output timed out after 1500 ms")
      assert.isAbove(ticks, 10)
      assert.isAtMost(after, before, "the worker thread is still running")
    }).pipe(Effect.provide(layer)))

  it.live("backreferences and lookarounds still find what they match, through the worker", () =>
    Effect.gen(function*() {
      const doubled = yield* grep({ pattern: "(\\w)\\1", path: "words.txt" })
      assert.strictEqual(doubled.text, "words.txt:1:hello\nwords.txt:3:book keeper")
      const behind = yield* grep({ pattern: "(?<=x)y", path: "." })
      assert.strictEqual(behind.text, "words.txt:4:xy")
      const store = yield* ArtifactStore
      const stored = yield* store.put({ sessionId: "s", toolId: "bash", text: "abab\r\nab\nxabab\n" })
      const page = yield* inRun(retrieveToolOutput({ artifactId: stored.artifactId, offset: 1, limit: 10, grep: "(ab)\\1" }))
      assert.strictEqual(page.text.split("\n").slice(1).join("\n"), "1\tabab\n3\txabab")
    }).pipe(Effect.provide(layer)))

  it.scoped("the worker and the main thread find the same lines", () =>
    Effect.gen(function*() {
      const documents = ["alpha\nbeta\r\ngamma\n", "", "\n\n", "aa\r\nbb\nab", "no newline at end"]
      for (const pattern of ["^$", "a$", "(a)\\1", "(?<=b)b", "^(?!a)", "a", "\\r"]) {
        const regex = new RegExp(pattern)
        const matcher = yield* lineMatcher(regex)
        const expected = documents.map((text) => matchingLines(regex, text))
        // A linear pattern would run in process: force the worker path by a pattern V8 rejects with `l`.
        assert.deepStrictEqual(yield* matcher.matchLines(documents), expected, pattern)
        const viaWorker = yield* lineMatcher(new RegExp(`(?:${pattern})(?=|)`))
        assert.deepStrictEqual(yield* viaWorker.matchLines(documents), expected, `${pattern} in the worker`)
      }
      assert.deepStrictEqual(matchingLines(/b/, "a\nb\r\nb"), [2, 3])
    }))
})

describe("grep and files that are not regular", () => {
  const root = makeWorkspace({ "dir/notes.txt": "needle here\n" })
  const fifo = NodePath.join(root, "dir", "pipe")
  spawnSync("mkfifo", [fifo])
  const layer = toolsLayer(root, { extraRoots: ["/dev"] }, { memoryDb: true })

  it.live("a FIFO in the tree is skipped, and named directly it is refused without opening it", () =>
    Effect.gen(function*() {
      assert.isTrue(NodeFs.statSync(fifo).isFIFO())
      const tree = yield* grep({ pattern: "needle" })
      assert.strictEqual(tree.text, "dir/notes.txt:1:needle here")
      const direct = yield* Effect.flip(grep({ pattern: "needle", path: "dir/pipe" }))
      assert.strictEqual(direct.code, "VALIDATION_ERROR")
      assert.strictEqual(
        direct.message,
        "dir/pipe is not a regular file or a folder (a FIFO, socket or device); grep reads only regular files"
      )
    }).pipe(Effect.provide(layer)))

  it.live("a device and a socket are refused", () =>
    Effect.gen(function*() {
      const zero = yield* Effect.flip(grep({ pattern: "x", path: "/dev/zero" }))
      assert.strictEqual(zero.code, "VALIDATION_ERROR")
      assert.include(zero.message, "is not a regular file or a folder")
      const socketPath = NodePath.join(root, "dir", "sock")
      const server = NodeNet.createServer()
      yield* Effect.async<void>((resume) => {
        server.listen(socketPath, () => resume(Effect.void))
      })
      const socket = yield* Effect.flip(grep({ pattern: "x", path: "dir/sock" })).pipe(
        Effect.ensuring(Effect.sync(() => server.close()))
      )
      assert.strictEqual(socket.code, "VALIDATION_ERROR")
      const tree = yield* grep({ pattern: "needle", path: "dir" })
      assert.strictEqual(tree.text, "dir/notes.txt:1:needle here")
    }).pipe(Effect.provide(layer)))
})
