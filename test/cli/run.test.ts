import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type ChildProcess, spawn } from "node:child_process"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { kernBin, runKern, stdoutShows } from "../support/cli.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { hostileReply, hostileShown, rawControl } from "./hostileText.js"

const env = { OPENROUTER_API_KEY: "sk-test" }


describe("kern tui", () => {
  it.live("streams replies, runs tool calls, answers /status /new /help, and leaves cleanly at end of input", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(
        FakeReply.toolCalls([
          { id: "c1", name: "read", args: { path: "IDENTITY.md" } },
          { id: "c2", name: "kern", args: { action: "status" } }
        ]),
        FakeReply.text("Hi, I am the agent.")
      )
      let child: ChildProcess | undefined
      // A failed assertion must not leave the agent running.
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["tui"], { cwd: dir, env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      const input = child!.stdin!
      input.write("hello\n")
      // The reply, then the prompt: the turn is over.
      yield* Effect.promise(() => stdoutShows(child!, "Hi, I am the agent.\n> "))
      input.end("/status\n/new\n/help\n/bogus\n")
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("→ read IDENTITY.md")
      expect(result.stdout).toContain("→ kern status")
      // The kern tool saw the live session the runtime had open.
      const toolMessages = JSON.stringify((yield* server.modelRequests)[1]!.body)
      expect(toolMessages).toMatch(/session:[^"]*\d{8}-\d{6}-\d{3}-[0-9a-f]{4}/)
      expect(result.stdout).toMatch(/session: +\d{8}-\d{6}-\d{3}-[0-9a-f]{4} \(5 messages\)/)
      expect(result.stdout).toMatch(/new session \d{8}-/)
      expect(result.stdout).toContain("/status")
      expect(result.stdout).toContain("unknown command /bogus")
      const sessions = JSON.parse((yield* Effect.promise(() => runKern(["sessions", "list", "--json"], { cwd: dir }))).stdout)
      expect(sessions).toHaveLength(2)
      expect(sessions[0].messages).toBe(5)
    })))
})

describe("kern tui and NO_REPLY", () => {
  it.live("a reply ending in NO_REPLY shows what came before it, never the marker or a prefix of it", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.text("Noted it.\nNO_REPLY"), FakeReply.text("NO_REPLY"), FakeReply.text("Second answer."))
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["tui"], { cwd: dir, env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      const input = child!.stdin!
      input.write("save it\nquiet\nand now?\n")
      yield* Effect.promise(() => stdoutShows(child!, "Second answer.\n> "))
      input.end()
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("Noted it.")
      expect(result.stdout).not.toMatch(/NO_RE/)
    })))
})

describe("kern tui and escape sequences", () => {
  it.live("a reply's control sequences are shown, not obeyed", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.text(hostileReply))
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["tui"], { cwd: dir, env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      child!.stdin!.end("hello\n")
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      expect(result.stdout).toContain(hostileShown)
      expect(result.stdout).not.toMatch(rawControl)
    })))
})

describe("kern run", () => {
  it.live("headless: stdin lines are messages; SIGTERM stops it with exit 0, nothing lost and the folder's lock released", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.text("Noted."))
      let child: ChildProcess | undefined
      // A failed assertion must not leave the agent running.
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["run"], { cwd: dir, env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      child!.stdin!.write("remember the milk\n")
      yield* Effect.promise(() => stdoutShows(child!, "Noted."))
      const lock = NodePath.join(dir, ".kern/agent.lock")
      expect(JSON.parse(NodeFs.readFileSync(lock, "utf8"))).toMatchObject({ pid: child!.pid, command: "kern run" })
      child!.kill("SIGTERM")
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      // The signal closed the scopes: the folder is free again.
      expect(NodeFs.existsSync(lock)).toBe(false)
      expect(result.stdout).not.toContain("> ")
      const sessionsDir = NodePath.join(dir, ".kern/sessions")
      const [file] = NodeFs.readdirSync(sessionsDir)
      const tags = NodeFs.readFileSync(NodePath.join(sessionsDir, file!), "utf8").trim().split("\n").map((l) => JSON.parse(l)._tag)
      expect(tags).toEqual(["session", "user", "assistant"])
    })))

  it.live("headless: slash commands are answered, not sent to the model; at end of input the queued turns finish and it exits 0", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.text("First answer."), FakeReply.text("Second answer."))
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["run"], { cwd: dir, env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      child!.stdin!.end("one\n/status\ntwo\n/help\n")
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("First answer.")
      expect(result.stdout).toContain("Second answer.")
      expect(result.stdout).toMatch(/session: +\d{8}-/)
      expect(result.stdout).toContain("/status")
      const requests = yield* server.modelRequests
      expect(requests).toHaveLength(2)
      expect(JSON.stringify(requests)).not.toContain("/help")
      expect(NodeFs.existsSync(NodePath.join(dir, ".kern/agent.lock"))).toBe(false)
    })))
})

describe("kern run: one terminal for every channel", () => {
  it.live("a message from the web shows with its channel, then its reply, as the attached terminal shows them", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.text("Noted."), FakeReply.text("Answer for the web."))
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["run"], { cwd: dir, env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      const answered = stdoutShows(child!, "Answer for the web.")
      child!.stdin!.write("hello\n")
      yield* Effect.promise(() => stdoutShows(child!, "Noted."))
      // Where the agent listens and its token, as every client finds them.
      const { address } = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/agent.lock"), "utf8")) as { address: string }
      const token = /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8"))?.[1] ?? ""
      const posted = yield* Effect.promise(() =>
        fetch(`${address}/message`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ text: "from the browser" })
        })
      )
      expect(posted.status).toBe(202)
      yield* Effect.promise(() => answered)
      child!.stdin!.end()
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("[web web] from the browser\nAnswer for the web.")
      // The terminal's own message is not echoed back as a channel's.
      expect(result.stdout).not.toContain("[terminal terminal]")
    })))
})

describe("kern tui on a terminal", () => {
  it.live("typing while a reply streams never lands inside it; Ctrl-C says what was not sent", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.text("The answer is 42.", { delay: "1500 millis" }))
      // `script` gives kern a pseudo-terminal: raw keystrokes in, the screen's bytes out.
      const child = spawn("script", ["-qfec", `${process.execPath} ${kernBin} tui`, "/dev/null"], {
        cwd: dir,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", TERM: "xterm", ...env },
        stdio: ["pipe", "pipe", "pipe"]
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
      let screen = ""
      child.stdout.on("data", (chunk: Buffer) => (screen += chunk.toString("utf8")))
      const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
      const shows = (text: string, from = 0) =>
        Effect.promise(() => new Promise<void>((resolve) => {
          const check = () => (screen.indexOf(text, from) >= 0 ? resolve() : setTimeout(check, 20))
          check()
        }))
      yield* shows("> ")
      child.stdin.write("what is it?\r")
      yield* Effect.promise(() => server.awaitRequests(1).pipe(Effect.runPromise))
      child.stdin.write("xyz")
      yield* shows("The answer is 42.")
      const reply = screen.indexOf("The answer is 42.")
      // The typed text is drawn again after the reply, with the prompt; never before or inside it.
      yield* shows("xyz", reply)
      expect(screen.slice(0, reply)).not.toContain("xyz")
      child.stdin.write("\x03")
      yield* shows("not sent: xyz")
      expect(yield* Effect.promise(() => exited)).toBe(0)
    })))
})
