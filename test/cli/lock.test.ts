import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { initAgentFolder, initAgentWithModel } from "../support/agentFolder.js"
import { type CliResult, runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

interface Line {
  readonly _tag: string
  readonly text?: string
  readonly toolCalls?: ReadonlyArray<{ readonly id: string }>
  readonly toolCallId?: string
  readonly result?: unknown
}

const sessionLines = (dir: string): Array<Line> => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  const files = NodeFs.readdirSync(sessions)
  expect(files).toHaveLength(1)
  return NodeFs.readFileSync(NodePath.join(sessions, files[0]!), "utf8").trim().split("\n").map((line) => JSON.parse(line))
}

const lockFile = (dir: string) => NodePath.join(dir, ".kern/agent.lock")

/** Field 22 of /proc/<pid>/stat, as the lock records it. */
const startOf = (pid: number) => {
  const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!
}

/** Writes the agent lock as if `pid` held it. */
const writeLock = (dir: string, pid: number, processStart: string, command = "kern chat") =>
  NodeFs.writeFileSync(
    lockFile(dir),
    JSON.stringify({ pid, processStart, startedAt: "2026-01-02T03:04:05.000Z", host: NodeOs.hostname(), command })
  )

/** The pid of a process that has exited. */
const deadPid = () => {
  const done = spawnSync("true")
  expect(done.status).toBe(0)
  return done.pid
}

const chat = (dir: string, message: string, extra: ReadonlyArray<string> = []) =>
  // A chat may wait its whole --wait for the lock (170 s below): it is stuck only beyond that.
  Effect.promise(() => runKern(["chat", "-m", message, ...extra], { cwd: dir, env, stuckAfterMs: 200_000 }))

describe("one runtime per agent folder", () => {
  it.live("ten kern chat processes at once (and a stale lock) take their turns one after another: ten complete turns, in lock order", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      const count = 10
      // Requests arrive in lock order: turn k asks for a tool (the glob) and then answers "reply k".
      for (let k = 1; k <= count; k++) {
        yield* server.reply(
          FakeReply.toolCalls([{ id: `call_${k}`, name: "glob", args: { pattern: "*.md" } }]),
          FakeReply.text(`reply ${k}`)
        )
      }
      // A lock left by a dead process: all ten find it stale at once, and exactly one may take it over.
      writeLock(dir, deadPid(), "12345")
      const messages = Array.from({ length: count }, (_, i) => `message ${i + 1}`)
      const results: ReadonlyArray<CliResult> = yield* Effect.all(
        messages.map((message) => chat(dir, message, ["--wait", "170"])),
        { concurrency: "unbounded" }
      )
      for (const result of results) expect(result.status, result.stderr).toBe(0)
      expect(results.filter((r) => r.stderr.includes("waiting for the agent in")).length).toBeGreaterThan(0)
      expect(results.filter((r) => r.stderr.includes("is no longer running"))).toHaveLength(1)

      const lines = sessionLines(dir)
      expect(lines.map((l) => l._tag)).toEqual(["session", ...Array.from({ length: count }, () => ["user", "assistant", "tool", "assistant"]).flat()])
      expect(JSON.stringify(lines)).not.toContain("interrupted")
      const turns = Array.from({ length: count }, (_, i) => lines.slice(1 + i * 4, 5 + i * 4))
      turns.forEach((turn, i) => {
        const k = i + 1
        expect(turn[1]!.toolCalls!.map((c) => c.id)).toEqual([`call_${k}`])
        expect(turn[2]!.toolCallId).toBe(`call_${k}`)
        expect(turn[3]!.text).toBe(`reply ${k}`)
        // The chat that took the k-th turn sent the k-th user message and printed the k-th reply.
        const owner = results[messages.indexOf(turn[0]!.text!)]!
        expect(owner.stdout.trim()).toBe(`reply ${k}`)
      })
      expect(new Set(turns.map((t) => t[0]!.text)).size).toBe(count)

      // Each turn's first request carried exactly the turns before it, complete.
      const requests = yield* server.modelRequests
      expect(requests).toHaveLength(2 * count)
      requests.filter((_, i) => i % 2 === 0).forEach((request, i) => {
        const body = request.body as { messages: Array<{ role: string; content: unknown }> }
        const users = body.messages.filter((m) => m.role === "user").map((m) => String(m.content))
        expect(users).toHaveLength(i + 1)
        users.forEach((text, j) => expect(text).toContain(turns[j]![0]!.text!))
        expect(body.messages.filter((m) => m.role === "tool")).toHaveLength(i)
      })
      expect(NodeFs.existsSync(lockFile(dir))).toBe(false)
    })), 180_000)

  it.live("a holder killed with SIGKILL leaves its lock behind; the next chat takes it over", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.text("too late", { delay: "60 seconds" }))
      let child: import("node:child_process").ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const running = runKern(["chat", "-m", "first"], { cwd: dir, env, onSpawn: (spawned) => (child = spawned) })
      yield* server.awaitRequests(1)
      const held = JSON.parse(NodeFs.readFileSync(lockFile(dir), "utf8"))
      expect(held).toMatchObject({ pid: child!.pid, command: "kern chat", host: NodeOs.hostname() })
      expect(held.processStart).toBe(startOf(child!.pid!))
      child!.kill("SIGKILL")
      expect((yield* Effect.promise(() => running)).status).toBe(null)
      expect(NodeFs.existsSync(lockFile(dir))).toBe(true)

      yield* server.reply(FakeReply.text("Here now."))
      const next = yield* chat(dir, "second", ["--wait", "5"])
      expect(next.status, next.stderr).toBe(0)
      expect(next.stdout).toContain("Here now.")
      expect(next.stderr).toContain(`took over ${lockFile(dir)}: pid ${held.pid} (kern chat) is no longer running`)
      expect(NodeFs.existsSync(lockFile(dir))).toBe(false)
    })))

  it.live("a lock file naming a dead pid, a pid reused by another process, or garbage is taken over with a warning", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      const stale: ReadonlyArray<readonly [string, () => void, string]> = [
        ["dead pid", () => writeLock(dir, deadPid(), "12345"), "is no longer running"],
        // This test process is alive, but it is not the process that took the lock: it started at another time.
        ["reused pid", () => writeLock(dir, process.pid, String(Number(startOf(process.pid)) + 1)), "is no longer running"],
        ["garbage", () => NodeFs.writeFileSync(lockFile(dir), "{\"pid\": 12"), "its content is not a lock"]
      ]
      for (const [name, plant, why] of stale) {
        plant()
        yield* server.reply(FakeReply.text(`ok ${name}`))
        const result = yield* chat(dir, name, ["--wait", "0"])
        expect(result.status, `${name}: ${result.stderr}`).toBe(0)
        expect(result.stdout).toContain(`ok ${name}`)
        expect(result.stderr).toContain(why)
        expect(result.stderr).not.toContain("waiting for the agent")
        expect(NodeFs.existsSync(lockFile(dir))).toBe(false)
      }
    })))

  it("while a live process holds the folder, --wait 1 exits 1 naming it; read-only commands run", async () => {
    const dir = initAgentFolder(["--model", "m"])
    writeLock(dir, process.pid, startOf(process.pid), "kern run")
    const busy = await runKern(["chat", "-m", "hi", "--wait", "1"], { cwd: dir, env })
    expect(busy.status).toBe(1)
    const lines = busy.stderr.trim().split("\n")
    expect(lines).toHaveLength(2)
    expect(lines[0]).toBe(`kern: waiting for the agent in ${dir}: held by pid ${process.pid} (kern run) since 2026-01-02T03:04:05.000Z`)
    expect(lines[1]).toContain(`busy: held by pid ${process.pid} (kern run)`)
    expect(lines[1]).toContain("gave up after 1 s")
    expect((await runKern(["run", "--wait", "0"], { cwd: dir, env })).stderr).toContain(`held by pid ${process.pid}`)

    for (const command of [["status"], ["sessions", "list"], ["kernel", "tools"], ["kernel", "info"], ["runtime-guard", "tools"]]) {
      const result = await runKern(command, { cwd: dir, env })
      // status runs too, and exits 1 for the problem it lists (model "m" has no price for the cost cap).
      expect(result.status, `${command.join(" ")}: ${result.stderr}`).toBe(command[0] === "status" ? 1 : 0)
      expect(result.stdout).not.toBe("")
    }
    // status says who runs the agent.
    expect((await runKern(["status"], { cwd: dir, env })).stdout).toContain(`running:   pid ${process.pid} (kern run) since 2026-01-02T03:04:05.000Z`)
    expect(JSON.parse((await runKern(["status", "--json"], { cwd: dir, env })).stdout).runtime).toEqual({
      pid: process.pid,
      command: "kern run",
      since: "2026-01-02T03:04:05.000Z"
    })
    // Nobody touched the holder's lock.
    expect(JSON.parse(NodeFs.readFileSync(lockFile(dir), "utf8")).pid).toBe(process.pid)
    const negative = await runKern(["chat", "-m", "hi", "--wait", "-1"], { cwd: dir, env })
    expect(negative.status).toBe(2)
    expect(negative.stderr).toContain("--wait must be 0 or more seconds")
  })
})

describe("read-before-write across processes", () => {
  it.live("a file read in one kern chat can be edited in the next on the same session; a change on disk between is refused", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      const file = NodePath.join(dir, "notes/plan.md")
      NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
      NodeFs.writeFileSync(file, "step one\nstep two\n")
      const editCall = (id: string, newString: string) =>
        FakeReply.toolCalls([{ id, name: "edit", args: { path: "notes/plan.md", oldString: "step two", newString } }])

      yield* server.reply(FakeReply.toolCalls([{ id: "r1", name: "read", args: { path: "notes/plan.md" } }]), FakeReply.text("Read it."))
      expect((yield* chat(dir, "read the plan")).status).toBe(0)
      yield* server.reply(editCall("e1", "step 2"), FakeReply.text("Edited."))
      const edited = yield* chat(dir, "change step two")
      expect(edited.status, edited.stderr).toBe(0)
      expect(edited.stderr).toContain("✓ edit")
      expect(NodeFs.readFileSync(file, "utf8")).toBe("step one\nstep 2\n")

      // The edit counts as seen; someone else then changes the file.
      NodeFs.writeFileSync(file, "step one\nstep two\nstep three\n")
      yield* server.reply(editCall("e2", "step II"), FakeReply.text("Could not."))
      const refused = yield* chat(dir, "change it again")
      expect(refused.status).toBe(0)
      expect(refused.stderr).toContain("✗ edit")
      expect(NodeFs.readFileSync(file, "utf8")).toBe("step one\nstep two\nstep three\n")
      const result = sessionLines(dir).find((l) => l._tag === "tool" && l.toolCallId === "e2")!
      expect(JSON.stringify(result.result)).toContain("changed on disk since you read it")

      // A new session has read nothing.
      yield* server.reply(editCall("e3", "step II"), FakeReply.text("Could not either."))
      const fresh = yield* chat(dir, "and in a new session", ["--new"])
      expect(fresh.stderr).toContain("✗ edit")
      expect(NodeFs.readFileSync(file, "utf8")).toBe("step one\nstep two\nstep three\n")
    })))

  it.live("five kern kernel exec edit processes on one file at once: every reported success is kept", () =>
    Effect.gen(function*() {
      const dir = initAgentFolder(["--model", "m"])
      const file = NodePath.join(dir, "notes/shared.md")
      const count = 5
      NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
      NodeFs.writeFileSync(file, Array.from({ length: count }, (_, i) => `line ${i}: todo`).join("\n") + "\n")
      expect((yield* Effect.promise(() => runKern(["kernel", "exec", "read", "--args", JSON.stringify({ path: "notes/shared.md" })], { cwd: dir }))).status).toBe(0)
      const results = yield* Effect.all(
        Array.from({ length: count }, (_, i) =>
          Effect.promise(() =>
            runKern([
              "kernel",
              "exec",
              "edit",
              "--args",
              JSON.stringify({ path: "notes/shared.md", oldString: `line ${i}: todo`, newString: `line ${i}: done by ${i}` })
            ], { cwd: dir })
          )),
        { concurrency: "unbounded" }
      )
      const final = NodeFs.readFileSync(file, "utf8")
      const succeeded = results.flatMap((result, i) => result.status === 0 ? [i] : [])
      for (const i of succeeded) expect(final).toContain(`line ${i}: done by ${i}`)
      // They all share the `cli` session, and each edit is based on the content the one before it left.
      expect(succeeded, results.map((r) => r.stderr).join("\n")).toEqual([0, 1, 2, 3, 4])
      expect(NodeFs.readdirSync(NodePath.join(dir, ".kern/locks"))).toEqual([])
    }))
})
