import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { spawnSync } from "node:child_process"
import { bash, bashKernelTimeoutMs } from "../../src/tools/bash.js"
import { makeWorkspace, toolsLayer } from "./support.js"
import { eventually } from "../support/waitFor.js"

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
    for (let i = 0; !NodeFs.existsSync(file) || NodeFs.readFileSync(file, "utf8").trim() === ""; i++) {
      if (i === 500) return yield* Effect.dieMessage(`${file} was never written`)
      yield* Effect.sleep("20 millis")
    }
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
      assert.isTrue(yield* eventually(() => isGone(pid)), `sleep ${pid} still running`)
    }))

  /** The pid a command wrote to `file`, once it is there. */
  const pidIn = (file: string) => Effect.map(waitForFile(file), Number)

  const gone = (pid: number) => eventually(() => isGone(pid))

  it.live("a timeout kills a child that left the process group with setsid, and returns at the timeout", () =>
    Effect.gen(function*() {
      const pidFile = NodePath.join(root, "setsid-timeout.pid")
      const started = Date.now()
      const error = yield* bash({
        command: `setsid -f bash -c 'echo $$ > ${pidFile}; exec sleep 300'; ` +
          `while [ ! -s ${pidFile} ]; do sleep 0.01; done; sleep 300`,
        timeout: 1000
      }).pipe(Effect.provide(layer), Effect.flip)
      // The old code waited for the escaped sleep to close the pipes: 300 s.
      assert.isBelow(Date.now() - started, 20_000)
      assert.strictEqual(error.code, "TIMEOUT")
      const pid = yield* pidIn(pidFile)
      assert.isTrue(yield* gone(pid), `setsid sleep ${pid} still running`)
      assert.include(error.message, "timed out after 1000 ms")
      assert.include(error.message, `sleep (pid ${pid}, had left the process group)`)
      // The group's leader: bash and its sleep, or only the sleep where bash ran its last command with exec.
      assert.match(error.message, /killed [23] processes: (bash|sleep) \(pid \d+\), /)
    }))

  it.live("a setsid daemon left running when the command finishes is killed, and the output says so", () =>
    Effect.gen(function*() {
      const pidFile = NodePath.join(root, "setsid-finish.pid")
      // The shell waits for the pid file, so the daemon has left the group (it may not have exec'd sleep yet).
      const out = yield* bash({
        command: `setsid -f bash -c 'echo $$ > ${pidFile}; exec sleep 300'; ` +
          `while [ ! -s ${pidFile} ]; do sleep 0.01; done; echo done`
      }).pipe(Effect.provide(layer))
      assert.strictEqual(out.exitCode, 0)
      assert.strictEqual(out.stdout, "done\n")
      const pid = yield* pidIn(pidFile)
      assert.isTrue(yield* gone(pid), `setsid sleep ${pid} still running`)
      const [status, killed, stdoutHeader] = out.text.split("\n")
      assert.strictEqual(status, "exit code: 0")
      assert.match(
        killed ?? "",
        new RegExp(
          "^killed 1 background process still running when the command finished \\(background processes do not " +
            `outlive a bash call\\): (bash|sleep) \\(pid ${pid}, had left the process group\\)$`
        )
      )
      assert.strictEqual(stdoutHeader, "STDOUT:")
    }))

  it.live("a double-fork daemon and a nohup child are killed when the shell exits normally", () =>
    Effect.gen(function*() {
      const daemonFile = NodePath.join(root, "daemon.pid")
      const nohupFile = NodePath.join(root, "nohup.pid")
      const out = yield* bash({
        // The shell waits for the pid files and for both children to be `sleep` (exec done: a process in the middle
        // of exec can be missed by one /proc scan on a loaded machine); what it leaves behind is killed as it exits.
        command: `( (setsid sleep 300 > /dev/null 2>&1 & echo $! > ${daemonFile}) & ); ` +
          `nohup sleep 300 > /dev/null 2>&1 & echo $! > ${nohupFile}; ` +
          `while [ ! -s ${daemonFile} ]; do sleep 0.01; done; ` +
          `for f in ${daemonFile} ${nohupFile}; do ` +
          `while [ "$(cat /proc/$(cat $f)/comm 2>/dev/null)" != sleep ]; do sleep 0.01; done; done; exit 0`
      }).pipe(Effect.provide(layer))
      assert.strictEqual(out.exitCode, 0)
      const daemon = yield* pidIn(daemonFile)
      const nohup = yield* pidIn(nohupFile)
      assert.isTrue(yield* gone(daemon), `daemon ${daemon} still running`)
      assert.isTrue(yield* gone(nohup), `nohup sleep ${nohup} still running`)
      // Listed as what they were when killed: the daemon may still have been the forked bash, not yet setsid.
      assert.include(out.text, "killed 2 background processes still running when the command finished")
      assert.include(out.text, `(pid ${daemon}`)
      assert.include(out.text, `(pid ${nohup}`)
    }))

  it.live("interrupting the call kills a child that left the group", () =>
    Effect.gen(function*() {
      const pidFile = NodePath.join(root, "setsid-interrupt.pid")
      const fiber = yield* bash({ command: `setsid -f bash -c 'echo $$ > ${pidFile}; exec sleep 300'; sleep 300` }).pipe(
        Effect.provide(layer),
        Effect.fork
      )
      const pid = yield* pidIn(pidFile)
      assert.isFalse(isGone(pid))
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* gone(pid), `setsid sleep ${pid} still running`)
    }))

  it.live("a process that strips the tag and holds the pipes does not hold the call past its timeout", () =>
    Effect.gen(function*() {
      const pidFile = NodePath.join(root, "untagged.pid")
      const started = Date.now()
      const error = yield* bash({
        command: `env -u KERN_TOOL_CALL setsid -f bash -c 'echo $$ > ${pidFile}; exec sleep 300'; sleep 300`,
        timeout: 1000
      }).pipe(Effect.provide(layer), Effect.flip)
      const pid = yield* pidIn(pidFile)
      // Not findable without a cgroup: the test cleans up after it.
      process.kill(pid, "SIGKILL")
      assert.isBelow(Date.now() - started, 20_000)
      assert.strictEqual(error.code, "TIMEOUT")
      assert.include(error.message, "output pipes were held open by a process kern could not find")
    }))

  it.live("a process whose name holds spaces and parentheses is named right in the report", () =>
    Effect.gen(function*() {
      const odd = NodePath.join(root, "odd) (name 1")
      NodeFs.copyFileSync(spawnSync("bash", ["-c", "command -v sleep"], { encoding: "utf8" }).stdout.trim(), odd)
      NodeFs.chmodSync(odd, 0o755)
      const pidFile = NodePath.join(root, "odd.pid")
      const out = yield* bash({
        command: `setsid -f bash -c 'echo $$ > ${pidFile}; exec "./odd) (name 1" 300'; ` +
          `while [ ! -s ${pidFile} ]; do sleep 0.01; done; sleep 0.2`
      }).pipe(Effect.provide(layer))
      const pid = yield* pidIn(pidFile)
      assert.isTrue(yield* gone(pid), `${pid} still running`)
      assert.include(out.text, `: odd) (name 1 (pid ${pid}, had left the process group)`)
    }))

  it.live("each call carries a tag of its own in KERN_TOOL_CALL", () =>
    Effect.gen(function*() {
      const first = yield* bash({ command: "echo $KERN_TOOL_CALL" }).pipe(Effect.provide(layer))
      const second = yield* bash({ command: "echo $KERN_TOOL_CALL" }).pipe(Effect.provide(layer))
      assert.match(first.stdout, /^[0-9a-f]{12}-\d+-[0-9a-z]+\n$/)
      assert.notStrictEqual(first.stdout, second.stdout)
    }))

  it("the kernel allows the command's timeout plus a grace", () => {
    assert.strictEqual(bashKernelTimeoutMs({ command: "true" }), 130_000)
    assert.strictEqual(bashKernelTimeoutMs({ command: "true", timeout: 600_000 }), 610_000)
  })
})
