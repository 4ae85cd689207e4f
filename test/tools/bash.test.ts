import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { bash, bashKernelTimeoutMs } from "../../src/tools/bash.js"
import { makeWorkspace, toolsLayer } from "./support.js"

/** A pid is gone when /proc has no entry for it or only a zombie waiting to be reaped. */
const isGone = (pid: number): boolean => {
  try {
    const status = NodeFs.readFileSync(`/proc/${pid}/status`, "utf8")
    return /^State:\s+Z/m.test(status)
  } catch {
    return true
  }
}

const waitForFile = (file: string) =>
  Effect.gen(function*() {
    while (!NodeFs.existsSync(file) || NodeFs.readFileSync(file, "utf8").trim() === "") yield* Effect.sleep("20 millis")
    return NodeFs.readFileSync(file, "utf8").trim()
  })

describe("bash", () => {
  const root = makeWorkspace({ "hello.txt": "hi\n" })
  NodeFs.mkdirSync(NodePath.join(root, ".kern"), { recursive: true })
  const layer = toolsLayer(root, { env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", API_TOKEN: "s3cret", VISIBLE: "yes" }, bashEnv: ["VISIBLE"] }, { memoryDb: true })

  it.live("runs in the agent folder and captures stdout, stderr and the exit code separately", () =>
    Effect.gen(function*() {
      const out = yield* bash({ command: "cat hello.txt; pwd; echo oops >&2; exit 3" }).pipe(Effect.provide(layer))
      assert.strictEqual(out.exitCode, 3)
      assert.strictEqual(out.stdout, `hi\n${root}\n`)
      assert.strictEqual(out.stderr, "oops\n")
      assert.strictEqual(out.text, `exit code: 3\nSTDOUT:\nhi\n${root}\nSTDERR:\noops`)
    }))

  it.live("the keys of .kern/.env are not in the environment", () =>
    Effect.gen(function*() {
      const out = yield* bash({ command: "echo \"${API_TOKEN:-unset} ${VISIBLE:-unset}\"" }).pipe(Effect.provide(layer))
      assert.strictEqual(out.stdout, "unset yes\n")
    }))

  it.live("a timeout kills the whole process group: the child sleep is gone", () =>
    Effect.gen(function*() {
      const pidFile = NodePath.join(root, "sleep-timeout.pid")
      const error = yield* bash({ command: `echo started; sleep 300 & echo $! > ${pidFile}; wait`, timeout: 700 }).pipe(
        Effect.provide(layer),
        Effect.flip
      )
      assert.strictEqual(error.code, "TIMEOUT")
      assert.include(error.message, "started")
      const pid = Number(NodeFs.readFileSync(pidFile, "utf8").trim())
      assert.isTrue(pid > 0)
      assert.isTrue(isGone(pid), `sleep ${pid} still running`)
    }))

  it.live("interrupting the call kills the group", () =>
    Effect.gen(function*() {
      const pidFile = NodePath.join(root, "sleep-interrupt.pid")
      const fiber = yield* bash({ command: `sleep 300 & echo $! > ${pidFile}; wait` }).pipe(Effect.provide(layer), Effect.fork)
      const pid = Number(yield* waitForFile(pidFile))
      assert.isFalse(isGone(pid))
      yield* Fiber.interrupt(fiber)
      assert.isTrue(isGone(pid), `sleep ${pid} still running`)
    }))

  it.live("a background child left behind when the command exits is killed too", () =>
    Effect.gen(function*() {
      const out = yield* bash({ command: "sleep 300 > /dev/null 2>&1 & echo $!" }).pipe(Effect.provide(layer))
      assert.strictEqual(out.exitCode, 0)
      // SIGKILL went to the group when bash exited; the kernel delivers it asynchronously.
      const pid = Number(out.stdout.trim())
      for (let i = 0; i < 100 && !isGone(pid); i++) yield* Effect.sleep("20 millis")
      assert.isTrue(isGone(pid), `sleep ${pid} still running`)
    }))

  it("the kernel allows the command's timeout plus a grace", () => {
    assert.strictEqual(bashKernelTimeoutMs({ command: "true" }), 130_000)
    assert.strictEqual(bashKernelTimeoutMs({ command: "true", timeout: 600_000 }), 610_000)
  })
})
