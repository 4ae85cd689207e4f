import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { freePort } from "../support/freePort.js"
import { recordedPid } from "../support/backgroundAgent.js"

/**
 * The processes kern starts, stops and finds, as real processes: a pid reused by another program, a zombie holding
 * the folder, a bash call's processes outliving a SIGKILL'd agent, an agent on a port the client's environment does
 * not know, and an agent too slow to answer at once.
 */

const env = { OPENROUTER_API_KEY: "sk-test" }

const kern = (args: ReadonlyArray<string>, cwd: string, extra: Record<string, string> = {}) =>
  Effect.promise(() => runKern(args, { cwd, env: { ...env, ...extra } }))

const pidFile = (dir: string) => NodePath.join(dir, ".kern/agent.pid")
const lockFile = (dir: string) => NodePath.join(dir, ".kern/agent.lock")
const logFile = (dir: string) => NodePath.join(dir, ".kern/logs/kern.log")


/** Where the background agent of `dir` listens: the address its lock records (the config's port for an older kern). */
const agentBase = (dir: string): string => {
  const { address } = JSON.parse(NodeFs.readFileSync(lockFile(dir), "utf8")) as { address?: string }
  const { port } = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")) as { port?: number }
  return address ?? `http://127.0.0.1:${port}`
}

/** State and start time from /proc/<pid>/stat; undefined once the process is gone. */
const stat = (pid: number): { readonly state: string; readonly start: string } | undefined => {
  try {
    const text = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    return { state: fields[0]!, start: fields[19]! }
  } catch {
    return undefined
  }
}

/** Running: it exists and is not a zombie (dead, waiting for its parent to reap it). */
const running = (pid: number) => {
  const now = stat(pid)
  return now !== undefined && now.state !== "Z" && now.state !== "X"
}

/** Polls `condition` until it holds; fails naming `what` after `withinMs`. */
const waitFor = (what: string, condition: () => boolean, withinMs = 30_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + withinMs
    while (!condition()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep("50 millis")
    }
  })

/** The background agent of `dir` is killed when the test ends, whatever happened. */
const killedAtEnd = (dir: string) =>
  Effect.addFinalizer(() =>
    Effect.sync(() => {
      const pid = NodeFs.existsSync(pidFile(dir)) ? recordedPid(dir) : undefined
      if (pid !== undefined && running(pid)) process.kill(pid, "SIGKILL")
    })
  )

/** A child process of this test, killed when the test ends. */
const child = (command: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(command, args, { stdio: ["ignore", "pipe", "ignore"] })),
    (process) => Effect.sync(() => process.kill("SIGKILL"))
  )

/** What a lock or agent.pid records for a holder. */
const holderJson = (pid: number, processStart: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ pid, processStart, startedAt: "2026-01-02T03:04:05.000Z", host: NodeOs.hostname(), command: "kern start", ...extra })

/** The processes whose environment carries a bash call's tag and which run in `dir`. */
const taggedIn = (dir: string): Array<number> => {
  const real = NodeFs.realpathSync(dir)
  return NodeFs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      return NodeFs.readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").some((v) => v.startsWith("KERN_TOOL_CALL=")) &&
        NodeFs.readlinkSync(`/proc/${pid}/cwd`) === real && running(pid)
    } catch {
      return false
    }
  })
}

describe("kern's processes", () => {
  it.live("kern stop never signals a process that got the agent's pid after a crash, and says why", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      const unrelated = yield* child("sleep", ["300"])
      const pid = unrelated.pid!
      // As an older kern wrote it: the bare pid, nothing to tell it from another process with that pid.
      NodeFs.writeFileSync(pidFile(dir), `${pid}\n`)
      const bare = yield* kern(["stop"], dir)
      expect(bare.status, bare.stderr).toBe(0)
      expect(bare.stdout).toContain("not running in the background")
      expect(bare.stderr).toContain(`pid ${pid} (sleep) without a start time`)
      expect(running(pid)).toBe(true)
      // As kern start writes it now: the agent's start time, which the process with the pid now does not have.
      NodeFs.writeFileSync(pidFile(dir), `${holderJson(pid, "1")}\n`)
      const reused = yield* kern(["stop"], dir)
      expect(reused.status, reused.stderr).toBe(0)
      expect(reused.stdout).toContain("not running in the background")
      expect(reused.stderr).toContain(`names pid ${pid}, but that is now another process (sleep, started at another time`)
      expect(running(pid)).toBe(true)
    })))

  it.live("a zombie holding the folder counts as gone: kern stop says the agent is not running, kern start proceeds", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* killedAtEnd(dir)
      // A real zombie: the child exits while its parent, now `sleep` (which never reaps), lives on.
      const parent = yield* child("/bin/sh", ["-c", "sleep 0.3 & echo $!; exec sleep 300"])
      let out = ""
      parent.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
      yield* waitFor("the child's pid", () => out.includes("\n"))
      const zombie = Number(out.trim())
      yield* waitFor(`pid ${zombie} to be a zombie`, () => stat(zombie)?.state === "Z")
      const holder = holderJson(zombie, stat(zombie)!.start)
      NodeFs.writeFileSync(lockFile(dir), holder)
      NodeFs.writeFileSync(pidFile(dir), `${holder}\n`)

      const stopped = yield* kern(["stop"], dir)
      expect(stopped.status, stopped.stderr).toBe(0)
      expect(stopped.stdout).toContain("not running in the background")
      expect(stopped.stderr).not.toContain("killing it")

      NodeFs.writeFileSync(pidFile(dir), `${holder}\n`)
      const started = yield* kern(["start"], dir)
      expect(started.status, started.stderr).toBe(0)
      const pid = recordedPid(dir)
      expect(pid).not.toBe(zombie)
      expect(started.stdout).toContain(`runs in the background: pid ${pid}`)
      expect(NodeFs.readFileSync(logFile(dir), "utf8")).toContain(`pid ${zombie} (kern start) is no longer running`)
      const stoppedAgain = yield* kern(["stop"], dir)
      expect(stoppedAgain.stdout, stoppedAgain.stderr).toContain(`stopped (pid ${pid})`)
    })), 120_000)

  it.live("a bash call's processes do not outlive a kill -9 of the agent: the next start reaps them and logs it", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* killedAtEnd(dir)
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: "sleep 60; echo x > slept.txt" } }]),
        FakeReply.text("done")
      )
      expect((yield* kern(["start"], dir)).status).toBe(0)
      const agent = recordedPid(dir)
      const address = agentBase(dir)
      const token = /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8"))![1]!
      const posted = yield* Effect.promise(() =>
        fetch(`${address}/message`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ text: "sleep a while" })
        }))
      expect(posted.status).toBe(202)
      yield* waitFor("the call's sleep", () => taggedIn(dir).length >= 2)
      const left = taggedIn(dir)
      yield* Effect.addFinalizer(() => Effect.sync(() => left.filter(running).forEach((pid) => process.kill(pid, "SIGKILL"))))

      process.kill(agent, "SIGKILL")
      yield* waitFor(`the agent (pid ${agent}) to die`, () => !running(agent))
      // What the bug was: nothing stops the call's process group when its agent dies.
      expect(left.filter(running)).toEqual(left)

      const restarted = yield* kern(["start"], dir)
      expect(restarted.status, restarted.stderr).toBe(0)
      yield* waitFor("the reaping in the log", () => /reaped \d+ process/.test(NodeFs.readFileSync(logFile(dir), "utf8")))
      const log = NodeFs.readFileSync(logFile(dir), "utf8")
      expect(log).toMatch(new RegExp(`reaped ${left.length} processes a previous run of this agent left running: .*sleep \\(pid \\d+\\)`))
      yield* waitFor("the reaped processes to be gone", () => left.every((pid) => !running(pid)), 10_000)
      expect(taggedIn(dir)).toEqual([])
      // The only process that could write it is gone, so it can never appear.
      expect(NodeFs.existsSync(NodePath.join(dir, "slept.txt"))).toBe(false)
      expect((yield* kern(["stop"], dir)).status).toBe(0)
    })), 120_000)

  it.live("an agent started on another port (KERN_PORT) is found by a client without it: the lock records the address", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* killedAtEnd(dir)
      const port = yield* freePort
      const started = yield* kern(["start"], dir, { KERN_PORT: String(port) })
      expect(started.status, started.stderr).toBe(0)
      // The port is nowhere in the folder's config: only the running agent knows it.
      expect(JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")).port).toBeUndefined()
      yield* server.reply(FakeReply.text("hi back"))
      const chat = yield* kern(["chat", "-m", "hi", "--wait", "5"], dir)
      expect(chat.status, chat.stderr).toBe(0)
      expect(chat.stdout).toBe("hi back\n")
      expect(JSON.parse(NodeFs.readFileSync(lockFile(dir), "utf8"))).toMatchObject({ address: `http://127.0.0.1:${port}` })
      const status = JSON.parse((yield* kern(["status", "--json"], dir)).stdout)
      expect(status).toMatchObject({ server: { url: `http://127.0.0.1:${port}`, pid: recordedPid(dir) } })
      expect((yield* kern(["open"], dir)).stdout).toContain(`http://127.0.0.1:${port}/auth?ticket=`)
      const approve = yield* kern(["approve", "apr_00000000"], dir)
      expect(approve.stderr).not.toContain("is not running")
      expect((yield* kern(["stop"], dir)).stdout).toContain("stopped")
    })), 120_000)

  it.live("kern chat waits for a slow agent with a progress line and delivers the message; it never takes the folder", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* killedAtEnd(dir)
      expect((yield* kern(["start"], dir)).status).toBe(0)
      const agent = recordedPid(dir)
      const lock = NodeFs.readFileSync(lockFile(dir), "utf8")
      // Slow for real: the agent is stopped until the chat has said it waits, so its /health cannot answer in time.
      process.kill(agent, "SIGSTOP")
      yield* Effect.addFinalizer(() => Effect.sync(() => running(agent) && process.kill(agent, "SIGCONT")))
      yield* server.reply(FakeReply.text("slow but here"))
      let chatProcess: ChildProcess | undefined
      let stderr = ""
      const chatting = yield* Effect.fork(Effect.promise(() =>
        runKern(["chat", "-m", "are you there"], {
          cwd: dir,
          env,
          onSpawn: (spawned) => {
            chatProcess = spawned
            spawned.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
          }
        })
      ))
      yield* Effect.addFinalizer(() => Effect.sync(() => chatProcess?.kill("SIGKILL")))
      yield* waitFor("the chat's progress line", () => stderr.includes(`the agent (pid ${agent})`))
      expect(stderr).toContain("has not answered yet; trying again")
      process.kill(agent, "SIGCONT")
      const chat = yield* Fiber.join(chatting)
      expect(chat.status, chat.stderr).toBe(0)
      expect(chat.stdout).toBe("slow but here\n")
      expect(chat.stderr).not.toContain("waiting for the agent in")
      expect(NodeFs.readFileSync(lockFile(dir), "utf8")).toBe(lock)
      expect((yield* kern(["stop"], dir)).stdout).toContain(`stopped (pid ${agent})`)
    })), 120_000)
})
