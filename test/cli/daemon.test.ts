import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { recordedPid } from "../support/backgroundAgent.js"
import { processRunning } from "../../src/storage/processState.js"
import { TurnEvent } from "../../src/turn/TurnEvent.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

const kern = (args: ReadonlyArray<string>, cwd: string, extra: Record<string, string> = {}) =>
  Effect.promise(() => runKern(args, { cwd, env: { ...env, ...extra } }))

const pidFile = (dir: string) => NodePath.join(dir, ".kern/agent.pid")

/** Whether `pid` runs: a zombie (killed, not yet reaped by whoever inherited it) has stopped, as kern itself judges. */
const alive = processRunning


/** The background agent of `dir` is killed when the test ends, whatever happened. */
const reaped = (dir: string) =>
  Effect.addFinalizer(() =>
    Effect.sync(() => {
      const pid = NodeFs.existsSync(pidFile(dir)) ? recordedPid(dir) : undefined
      if (pid !== undefined && alive(pid)) process.kill(pid, "SIGKILL")
    })
  )

const sessionMessages = (dir: string) => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  return NodeFs.readdirSync(sessions).flatMap((name) =>
    NodeFs.readFileSync(NodePath.join(sessions, name), "utf8").trim().split("\n").map((line) => JSON.parse(line) as { _tag: string; text?: string; envelope?: { interface: string } })
  )
}

const settings = (dir: string) => {
  const config = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")) as { port: number }
  const token = /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8"))?.[1] ?? ""
  return { base: `http://127.0.0.1:${config.port}`, token }
}

describe("kern start / status / chat / stop", () => {
  it.live("the agent runs in the background; status shows it; chat goes through it; logs show it; stop ends it", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* reaped(dir)
      const started = yield* kern(["start"], dir)
      expect(started.status, started.stderr).toBe(0)
      const pid = recordedPid(dir)
      expect(started.stdout).toContain(`pid ${pid}`)
      expect(alive(pid)).toBe(true)
      const { base, token } = settings(dir)
      expect(token.length).toBeGreaterThan(20)
      expect(NodeFs.statSync(NodePath.join(dir, ".kern/.env")).mode & 0o777).toBe(0o600)
      expect(started.stdout).toContain(base)

      const again = yield* kern(["start"], dir)
      expect(again.status).toBe(0)
      expect(again.stdout).toContain("already runs")

      const status = yield* kern(["status", "--json"], dir)
      expect(JSON.parse(status.stdout)).toMatchObject({ runtime: { pid, command: "kern start" }, server: { url: base, pid } })
      expect((yield* kern(["status"], dir)).stdout).toMatch(new RegExp(`server: +${base.replace(/\./g, "\\.")}, up \\d+`))

      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "glob", args: { pattern: "*.md" } }]),
        FakeReply.text("Hello from the background.")
      )
      const chat = yield* kern(["chat", "-m", "hi there", "--json"], dir)
      expect(chat.status, chat.stderr).toBe(0)
      const events = chat.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string; turnId: string })
      // Through the running agent, the same lines as a one-shot chat (test/cli/chat.test.ts): the turn's events as it
      // emitted them, without what the stream added (seq, at).
      const types = events.map((e) => e.type).filter((type, i, all) => type !== "text-delta" || all[i - 1] !== "text-delta")
      expect(types).toEqual(["incoming", "thinking", "tool-call", "tool-result", "thinking", "text-delta", "finish"])
      expect(events[0]).toEqual({ type: "incoming", turnId: events[0]!.turnId, conversationId: "cli:terminal", messageId: events[0]!.turnId, text: "hi there", interface: "cli", channel: "terminal", userId: "operator" })
      expect(events.find((e) => e.type === "tool-call")).toMatchObject({ name: "glob" })
      expect(events.at(-1)).toMatchObject({ type: "finish", reply: "Hello from the background.", delivered: true, steps: 2 })
      for (const event of events) {
        expect(Schema.decodeUnknownEither(TurnEvent)(event)._tag, JSON.stringify(event)).toBe("Right")
        expect(event).toMatchObject({ turnId: events[0]!.turnId, conversationId: "cli:terminal" })
        expect(event).not.toHaveProperty("seq")
      }
      // The background agent ran the turn: the chat process never held the folder.
      const user = sessionMessages(dir).find((m) => m._tag === "user" && m.text === "hi there")
      expect(user?.envelope?.interface).toBe("cli")
      yield* server.reply(FakeReply.text("Plain answer."))
      const plain = yield* kern(["chat", "-m", "again"], dir)
      expect(plain.stdout).toBe("Plain answer.\n")
      yield* server.reply(FakeReply.text("In a new session."))
      const fresh = yield* kern(["chat", "--new", "-m", "start over"], dir)
      expect(fresh.stdout, fresh.stderr).toBe("In a new session.\n")
      expect(NodeFs.readdirSync(NodePath.join(dir, ".kern/sessions"))).toHaveLength(2)

      const opened = yield* kern(["open"], dir)
      expect(opened.status, opened.stderr).toBe(0)
      expect(opened.stdout.trim()).toMatch(new RegExp(`^${base.replace(/\./g, "\\.")}/auth\\?ticket=[A-Za-z0-9_-]+$`))
      const login = yield* Effect.promise(() => fetch(opened.stdout.trim(), { redirect: "manual" }))
      expect(login.status).toBe(303)

      const logs = yield* kern(["logs", "-n", "20"], dir)
      expect(logs.stdout).toMatch(/INFO serving http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)/)
      expect((yield* kern(["logs", "--level", "error"], dir)).stdout).not.toContain("serving")

      // A browser tab's event stream and a client that has sent half a request stay open while the agent stops:
      // neither may hold it up (Node's server.close waits for both; kern stop would end up killing the agent).
      const tab = new AbortController()
      const stream = yield* Effect.promise(() =>
        fetch(`${settings(dir).base}/events`, { headers: { authorization: `Bearer ${settings(dir).token}` }, signal: tab.signal }))
      yield* Effect.promise(() => stream.body!.getReader().read())
      const slow = NodeNet.connect(Number(new URL(settings(dir).base).port), "127.0.0.1")
      slow.on("error", () => {})
      yield* Effect.promise(() => new Promise<void>((resolve) => slow.once("connect", () => resolve())))
      slow.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
      const stopped = yield* kern(["stop"], dir)
      tab.abort()
      slow.destroy()
      expect(stopped.status, stopped.stderr).toBe(0)
      expect(stopped.stdout).toContain(`stopped (pid ${pid})`)
      expect(stopped.stderr).not.toContain("killing it")
      expect(alive(pid)).toBe(false)
      expect(NodeFs.existsSync(pidFile(dir))).toBe(false)
      expect(JSON.parse((yield* kern(["status", "--json"], dir)).stdout)).toMatchObject({ runtime: null, server: null })
      expect((yield* kern(["stop"], dir)).stdout).toContain("not running")
      // In-process again once it is stopped.
      yield* server.reply(FakeReply.text("From this process."))
      expect((yield* kern(["chat", "-m", "third"], dir)).stdout).toBe("From this process.\n")
    })), 120_000)

  it.live("a start that fails prints the error the agent logged, and exits 1", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* reaped(dir)
      const result = yield* Effect.promise(() => runKern(["start"], { cwd: dir, env: {} }))
      expect(result.status).toBe(1)
      expect(result.stderr).toContain("the agent did not start")
      expect(result.stderr).toContain("OPENROUTER_API_KEY")
      expect(NodeFs.existsSync(pidFile(dir))).toBe(false)
    })))

  it.live("a start that fails after the agent got going (its port taken) prints the error alone: no debug lines, no stack", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      // Another program on the agent's port, which hangs up on whoever connects.
      const taken = NodeNet.createServer((socket) => socket.destroy())
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => taken.listen({ host: "127.0.0.1", port: 0 }, resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => taken.close(() => resolve())))
      )
      const port = (taken.address() as NodeNet.AddressInfo).port
      const dir = initAgentWithModel(server.baseURL, { port, heartbeatInterval: 0 })
      yield* reaped(dir)
      const result = yield* kern(["start"], dir)
      expect(result.status).toBe(1)
      expect(result.stderr).toContain("the agent did not start")
      expect(result.stderr).toContain(`could not listen on 127.0.0.1:${port}: the port is in use`)
      // The agent had opened kern.db and joined its cluster before it failed: those debug lines, and the shutdown's
      // cause with its stack, stay in the log.
      expect(result.stderr).not.toMatch(/DEBUG|Running migration|Sharding|\n\s+at /)
      const logged = yield* kern(["logs", "--level", "debug", "-n", "200"], dir)
      expect(logged.stdout).toContain("Shutting down")
      expect(NodeFs.existsSync(pidFile(dir))).toBe(false)
    })))

  it.live("a message accepted (202) survives kill -9 and is answered after the restart, exactly once", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* reaped(dir)
      expect((yield* kern(["start"], dir)).status).toBe(0)
      const pid = recordedPid(dir)
      const { base, token } = settings(dir)
      const post = (text: string, channel: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${base}/message`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ text, channel })
          })
          return { status: response.status, body: await response.json() as { turnId: string } }
        })
      // The first turn hangs on the model, so the second message waits in the inbox behind it.
      yield* server.reply(FakeReply.text("too late", { delay: "60 seconds" }))
      expect((yield* post("first", "a")).status).toBe(202)
      yield* server.awaitRequests(1)
      const second = yield* post("second", "b")
      expect(second.status).toBe(202)
      process.kill(pid, "SIGKILL")
      while (alive(pid)) yield* Effect.sleep("20 millis")
      expect(sessionMessages(dir).filter((m) => m.text === "second")).toHaveLength(0)

      yield* server.reply(FakeReply.text("Answered the second."))
      const restarted = yield* kern(["start"], dir)
      expect(restarted.status, restarted.stderr).toBe(0)
      yield* server.awaitRequests(2)
      let messages = sessionMessages(dir)
      while (!messages.some((m) => m._tag === "assistant" && m.text === "Answered the second.")) {
        yield* Effect.sleep("50 millis")
        messages = sessionMessages(dir)
      }
      expect(messages.filter((m) => m._tag === "user" && m.text === "second")).toHaveLength(1)
      expect(messages.filter((m) => m._tag === "user" && m.text === "first")).toHaveLength(1)
      const status = yield* Effect.promise(() => fetch(`${base}/status`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json()))
      expect(status).toMatchObject({ runtime: { inbox: 0 } })
      // One model request per turn: the replayed message was answered once.
      expect((yield* server.modelRequests).length).toBe(2)
      expect((yield* kern(["stop"], dir)).status).toBe(0)
    })), 120_000)

  it.live("kern restart brings up a new agent on the same port; logs -f follows it; Ctrl-C on an attached tui leaves it running", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* reaped(dir)
      // Restart of an agent that does not run: it starts.
      const first = yield* kern(["restart"], dir)
      expect(first.status, first.stderr).toBe(0)
      expect(first.stdout).toContain("not running in the background")
      const before = recordedPid(dir)
      const { base } = settings(dir)

      let followed = ""
      let follower: import("node:child_process").ChildProcess | undefined
      const following = Effect.promise(() =>
        runKern(["logs", "-f", "-n", "0"], { cwd: dir, env, onSpawn: (c) => {
          follower = c
          c.stdout?.on("data", (chunk: Buffer) => (followed += chunk.toString("utf8")))
        } })
      )
      const followFiber = yield* Effect.fork(following)
      while (follower === undefined) yield* Effect.sleep("20 millis")
      yield* Effect.addFinalizer(() => Effect.sync(() => follower?.kill("SIGKILL")))

      const restarted = yield* kern(["restart"], dir)
      expect(restarted.status, restarted.stderr).toBe(0)
      expect(restarted.stdout).toContain(`stopped (pid ${before})`)
      const after = recordedPid(dir)
      expect(after).not.toBe(before)
      expect(alive(before)).toBe(false)
      expect(alive(after)).toBe(true)
      expect(restarted.stdout).toContain(`pid ${after}, ${base}`)
      const health = yield* Effect.promise(() => fetch(`${base}/health`).then((r) => r.json() as Promise<{ pid: number }>))
      expect(health.pid).toBe(after)
      // -n 0 printed nothing old; what the new agent logged arrives as it is written.
      while (!followed.includes(`serving ${base} (pid ${after})`)) yield* Effect.sleep("50 millis")
      expect(followed).not.toContain(`serving ${base} (pid ${before})`)
      follower!.kill("SIGTERM")
      yield* Fiber.join(followFiber)

      // An attached tui that gets Ctrl-C (SIGINT) leaves; the agent goes on.
      let out = ""
      let tui: import("node:child_process").ChildProcess | undefined
      const tuiDone = Effect.promise(() =>
        runKern(["tui"], { cwd: dir, env, stdin: true, onSpawn: (c) => {
          tui = c
          c.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
        } })
      )
      const tuiFiber = yield* Effect.fork(tuiDone)
      while (!out.includes("running at")) yield* Effect.sleep("50 millis")
      tui!.kill("SIGINT")
      yield* Fiber.join(tuiFiber)
      expect(alive(after)).toBe(true)
      expect((yield* Effect.promise(() => fetch(`${base}/health`))).status).toBe(200)
      expect((yield* kern(["stop"], dir)).status).toBe(0)
    })), 120_000)

  it.live("kern tui attaches to the running agent: its own turns, other channels' messages live, and leaving keeps the agent running", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* reaped(dir)
      expect((yield* kern(["start"], dir)).status).toBe(0)
      const pid = recordedPid(dir)
      const { base, token } = settings(dir)
      // The first reply ends in NO_REPLY: the attached terminal shows what came before it, never the marker.
      yield* server.reply(FakeReply.text("Hi from the agent.\nNO_REPLY"), FakeReply.text("Answer for the web."))
      let child: import("node:child_process").ChildProcess | undefined
      let out = ""
      const done = Effect.promise(() =>
        runKern(["tui"], { cwd: dir, env, stdin: true, onSpawn: (c) => {
          child = c
          c.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
        } })
      )
      const fiber = yield* Effect.fork(done)
      while (!out.includes("running at")) yield* Effect.sleep("50 millis")
      child!.stdin!.write("hello\n")
      while (!out.includes("Hi from the agent.")) yield* Effect.sleep("50 millis")
      yield* Effect.promise(() =>
        fetch(`${base}/message`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ text: "from the browser" })
        })
      )
      while (!out.includes("Answer for the web.")) yield* Effect.sleep("50 millis")
      expect(out).toContain("[web web] from the browser")
      expect(out).not.toMatch(/NO_RE/)
      child!.stdin!.write("/quit\n")
      const result = yield* Fiber.join(fiber)
      expect(result.status, result.stderr).toBe(0)
      expect(alive(pid)).toBe(true)
      expect((yield* kern(["stop"], dir)).status).toBe(0)
    })), 120_000)
})
