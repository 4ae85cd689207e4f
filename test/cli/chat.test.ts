import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { testBuild } from "../support/build.js"
import { runCollected, runKern } from "../support/cli.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { makeTempDir } from "../support/tempDir.js"
import { hostileReply, hostileShown, rawControl } from "./hostileText.js"
import { TurnEvent } from "../../src/turn/TurnEvent.js"


const env = { OPENROUTER_API_KEY: "sk-test" }

const sessionLines = (dir: string) => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  const [file] = NodeFs.readdirSync(sessions)
  return NodeFs.readFileSync(NodePath.join(sessions, file!), "utf8").trim().split("\n").map((line) => JSON.parse(line))
}

describe("kern chat", () => {
  it.live("a turn with two tool calls end to end: tools run through the kernel, the reply streams, all is in the session", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(
        FakeReply.toolCalls([
          { id: "call_w", name: "write", args: { path: "notes/plan.md", content: "ship it\n" } },
          { id: "call_r", name: "read", args: { path: "IDENTITY.md", limit: 3 } }
        ], { text: "Writing the plan." }),
        FakeReply.text("Saved the plan to notes/plan.md.")
      )
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "write the plan down"], { cwd: dir, env }))
      expect(result.stderr).toContain("→ write")
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("Saved the plan to notes/plan.md.")
      expect(NodeFs.readFileSync(NodePath.join(dir, "notes/plan.md"), "utf8")).toBe("ship it\n")

      const requests = yield* server.modelRequests
      expect(requests.map((r) => r.path)).toEqual(["/chat/completions", "/chat/completions"])
      const second = requests[1]!.body as { messages: Array<{ role: string; content: unknown; tool_call_id?: string }> }
      const toolMessages = second.messages.filter((m) => m.role === "tool")
      expect(toolMessages.map((m) => m.tool_call_id).sort()).toEqual(["call_r", "call_w"])
      expect(JSON.stringify(toolMessages)).toContain("# IDENTITY.md")
      const firstUser = second.messages.find((m) => m.role === "user")!
      expect(String(firstUser.content)).toMatch(/^\[via cli, terminal, user: operator, time: \d{4}-\d\d-\d\dT/)

      const lines = sessionLines(dir)
      expect(lines.map((l) => l._tag)).toEqual(["session", "user", "assistant", "tool", "tool", "assistant"])
      const info = JSON.parse((yield* Effect.promise(() => runKern(["kernel", "info", "--json"], { cwd: dir }))).stdout)
      expect(info.events).toBeGreaterThanOrEqual(4)
    })))

  it.live("the memory files the turn changed (and the operator's hand edit) are committed before chat exits; nothing else", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const cwd = makeTempDir()
      const init = yield* Effect.promise(() => runKern(["init", "agent", "--model", "test-model", "--base-url", server.baseURL], { cwd }))
      expect(init.status, init.stderr).toBe(0)
      const dir = NodePath.join(cwd, "agent")
      const today = new Date().toISOString().slice(0, 10)
      const config = NodePath.join(dir, ".kern/config.json")
      NodeFs.writeFileSync(config, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(config, "utf8")), timezone: "UTC" }))
      NodeFs.appendFileSync(NodePath.join(dir, "AGENTS.md"), "\nA rule added by hand.\n")
      yield* server.reply(
        FakeReply.toolCalls([
          { id: "c1", name: "write", args: { path: `notes/${today}.md`, content: "talked about hosts\n" } },
          { id: "c2", name: "write", args: { path: "knowledge/hosts.md", content: "web1: nginx\n" } },
          { id: "c3", name: "write", args: { path: "scratch.txt", content: "not memory\n" } }
        ]),
        FakeReply.text("Noted.")
      )
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "remember the hosts"], { cwd: dir, env }))
      expect(result.status, result.stderr).toBe(0)
      const git = (...args: ReadonlyArray<string>) => spawnSync("git", args, { cwd: dir, encoding: "utf8" }).stdout
      expect(git("log", "--format=%s").trim().split("\n")).toHaveLength(2)
      expect(git("show", "--name-only", "--format=", "HEAD").trim().split("\n").sort())
        .toEqual(["AGENTS.md", "knowledge/hosts.md", `notes/${today}.md`])
      expect(git("log", "-1", "--format=%B")).toContain(`- notes/${today}.md`)
      // The hand-changed config under .kern/ is never tracked (ignored from init on), so git does not even list it.
      expect(git("status", "--porcelain")).toBe("?? scratch.txt\n")
    })))

  it.live("the notes summary a chat starts is made before it exits, and the next chat's prompt carries it", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      NodeFs.writeFileSync(NodePath.join(dir, "notes/2026-01-01.md"), "deployed web1\n")
      NodeFs.writeFileSync(NodePath.join(dir, "notes/2026-01-02.md"), "today\n")
      // The turn and the summary ask the model at the same time; both get the same answer, whichever comes first.
      yield* server.reply(FakeReply.text("Web1 was deployed."), FakeReply.text("Web1 was deployed."))
      const first = yield* Effect.promise(() => runKern(["chat", "-m", "hello"], { cwd: dir, env }))
      expect(first.status, first.stderr).toBe(0)
      const asked = (yield* server.modelRequests).map((r) => JSON.stringify(r.body))
      expect(asked).toHaveLength(2)
      expect(asked.filter((body) => body.includes("Summarize these daily notes"))).toHaveLength(1)
      expect(asked.some((body) => body.includes("<notes_summary"))).toBe(false)

      yield* server.reply(FakeReply.text("ok"))
      const second = yield* Effect.promise(() => runKern(["chat", "-m", "what happened?"], { cwd: dir, env }))
      expect(second.status, second.stderr).toBe(0)
      const requests = yield* server.modelRequests
      expect(requests).toHaveLength(3)
      expect(JSON.stringify(requests[2]!.body)).toContain("<notes_summary of=\\\"notes/2026-01-01.md\\\">\\nWeb1 was deployed.")
    })))

  it.live("model text and tool output reach the terminal with their control sequences shown, not obeyed", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "read", args: { path: "\x1b]52;c;ZXZpbA==\x07.md" } }]),
        FakeReply.text(hostileReply)
      )
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "hi"], { cwd: dir, env }))
      expect(result.status).toBe(0)
      expect(result.stdout).toContain(hostileShown)
      expect(result.stderr).toContain("✗ read: NOT_FOUND: ^[]52;c;ZXZpbA==^G.md does not exist")
      expect(result.stdout).not.toMatch(rawControl)
      expect(result.stderr).not.toMatch(rawControl)
    })))

  it.live("--json prints the turn's events as JSON lines", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "glob", args: { pattern: "*.md" } }]),
        FakeReply.text("Five files.")
      )
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "list", "--json"], { cwd: dir, env }))
      expect(result.status).toBe(0)
      const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line))
      // The events GET /events streams for a turn (test/cli/daemon.test.ts: the same lines through a running agent).
      const types = events.map((e: { type: string }) => e.type).filter((type: string, i: number, all: Array<string>) => type !== "text-delta" || all[i - 1] !== "text-delta")
      expect(types).toEqual(["incoming", "thinking", "tool-call", "tool-result", "thinking", "text-delta", "finish"])
      expect(events[0]).toEqual({ type: "incoming", turnId: events[0].turnId, conversationId: "cli:terminal", messageId: events[0].turnId, text: "list", interface: "cli", channel: "terminal", userId: "operator" })
      expect(events.find((e: { type: string }) => e.type === "tool-call")).toMatchObject({ name: "glob", params: { pattern: "*.md" } })
      expect(events[events.length - 1]).toMatchObject({ reply: "Five files.", delivered: true, steps: 2, usage: { inputTokens: expect.any(Number) } })
      // Every line is one event of the one family, with its turn and conversation (the operator's terminal).
      const turnId = events[0].turnId
      expect(turnId).toEqual(expect.any(String))
      for (const event of events) {
        expect(Schema.decodeUnknownEither(TurnEvent)(event)._tag, JSON.stringify(event)).toBe("Right")
        expect(event).toMatchObject({ turnId, conversationId: "cli:terminal" })
        expect(event).not.toHaveProperty("seq")
      }
    })))

  it.live("--json prints a failed turn's failure as data: its tag, reason and status", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.error(401))
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "hello", "--json"], { cwd: dir, env }))
      expect(result.status).toBe(1)
      const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line))
      expect(events.find((e: { type: string }) => e.type === "error")).toMatchObject({
        failure: { _tag: "ProviderFailed", reason: "auth", status: 401 }
      })
      for (const event of events) expect(Schema.decodeUnknownEither(TurnEvent)(event)._tag).toBe("Right")
    })))

  it.live("a provider failure ends the turn with one clear line and exit 1; the message and the failure stay in the session", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.error(401))
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "hello"], { cwd: dir, env }))
      expect(result.status).toBe(1)
      const lines = result.stderr.trim().split("\n")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^kern: .*(401|auth|key)/i)
      // The failure is part of the conversation's record (README: a failed or stopped turn).
      expect(sessionLines(dir).map((l) => l._tag)).toEqual(["session", "user", "turn-failed"])
    })))

  it.live("a reply that ends with NO_REPLY shows what came before it and never the marker", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.text("NO_REPLY"), FakeReply.text("Saved it to notes.\nNO_REPLY"), FakeReply.text("Noted.\nNO_REPLY"))
      const silent = yield* Effect.promise(() => runKern(["chat", "-m", "[heartbeat]"], { cwd: dir, env }))
      expect(silent.status).toBe(0)
      expect(silent.stdout).toBe("")
      const partial = yield* Effect.promise(() => runKern(["chat", "-m", "save it"], { cwd: dir, env }))
      expect(partial.stdout).toBe("Saved it to notes.")
      expect(partial.stdout).not.toContain("NO_REPLY")
      // --json prints the events as the turn emitted them: the marker (or a prefix of it) is in no line either.
      const json = yield* Effect.promise(() => runKern(["chat", "-m", "note it", "--json"], { cwd: dir, env }))
      expect(json.status).toBe(0)
      expect(json.stdout).not.toMatch(/NO_RE/)
      const lines = json.stdout.trim().split("\n").map((line) => JSON.parse(line))
      expect(lines.at(-1)).toMatchObject({ type: "finish", reply: "Noted.", delivered: false })
    })))

  it("no API key or no model: exit 2 with one message naming what to set", async () => {
    const cwd = makeTempDir()
    expect((await runKern(["init", "agent", "--no-git", "--model", "m"], { cwd })).status).toBe(0)
    const noKey = await runKern(["chat", "agent", "-m", "hi"], { cwd })
    expect(noKey.status).toBe(2)
    expect(noKey.stderr.trim().split("\n")).toHaveLength(1)
    expect(noKey.stderr).toContain("OPENROUTER_API_KEY")
    expect((await runKern(["init", "bare", "--no-git"], { cwd })).status).toBe(0)
    const noModel = await runKern(["chat", "bare", "-m", "hi"], { cwd, env })
    expect(noModel.status).toBe(2)
    expect(noModel.stderr).toMatch(/model/)
  })
})

describe("kern chat, crash safety", () => {
  it.live("a chat killed mid-turn loses nothing it had appended; the next chat continues the session", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "write", args: { path: "notes/x.md", content: "kept\n" } }]),
        // The second model call hangs: the process is killed while waiting for it.
        FakeReply.text("too late", { delay: "60 seconds" })
      )
      let child: import("node:child_process").ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const running = runKern(["chat", "-m", "write x"], { cwd: dir, env, onSpawn: (spawned) => (child = spawned) })
      yield* server.awaitRequests(2)
      child?.kill("SIGKILL")
      const killed = yield* Effect.promise(() => running)
      expect(killed.status).toBe(null)
      expect(sessionLines(dir).map((l) => l._tag)).toEqual(["session", "user", "assistant", "tool"])

      yield* server.reply(FakeReply.text("Back again."))
      const again = yield* Effect.promise(() => runKern(["chat", "-m", "are you there?"], { cwd: dir, env }))
      expect(again.status).toBe(0)
      expect(again.stdout).toContain("Back again.")
      expect(sessionLines(dir).map((l) => l._tag)).toEqual(["session", "user", "assistant", "tool", "user", "assistant"])
      const third = JSON.stringify((yield* server.modelRequests)[2]!.body)
      expect(third).toContain("write x")
      expect(third).toContain("are you there?")

      const list = JSON.parse((yield* Effect.promise(() => runKern(["sessions", "list", "--json"], { cwd: dir }))).stdout)
      expect(list).toHaveLength(1)
      expect(list[0]).toMatchObject({ messages: 5, active: true })
      const status = JSON.parse((yield* Effect.promise(() => runKern(["status", "--json"], { cwd: dir, env }))).stdout)
      expect(status.usage.turns).toBe(1)
      expect(status.usage.inputTokens).toBeGreaterThan(0)
    })))
})

describe("kern chat with no agent running", () => {
  /** The test build's bin/ and dist/ (no source maps, no code caches), under node_modules so its packages resolve. */
  const buildCopy = () => {
    const cache = NodePath.resolve(import.meta.dirname, "../../node_modules/.cache")
    NodeFs.mkdirSync(cache, { recursive: true })
    const copy = NodeFs.mkdtempSync(NodePath.join(cache, "kern-oneshot-"))
    NodeFs.cpSync(testBuild, copy, { recursive: true, filter: (file) => !file.endsWith(".map") && !file.endsWith(".v8cache") })
    return copy
  }

  it.live("leaves the chat client's and the turn's code caches for the next chat, which loads them as they are: neither is rewritten", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      const copy = buildCopy()
      yield* Effect.addFinalizer(() => Effect.sync(() => NodeFs.rmSync(copy, { recursive: true, force: true })))
      const client = NodePath.join(copy, "dist", "quickChat.cjs.v8cache")
      const turn = NodePath.join(copy, "dist", "quickChatLocal.cjs.v8cache")
      const chat = (text: string) =>
        Effect.gen(function*() {
          const result = yield* Effect.promise(() =>
            runCollected(process.execPath, [NodePath.join(copy, "bin/kern.js"), "chat", "-m", text], { cwd: dir, env })
          )
          expect(result.status, result.stderr).toBe(0)
          expect(result.stdout).toContain(`reply ${text}`)
        })
      // Accepted, so not written again: the same file (a rewrite renames a new one into place).
      const unchanged = (file: string, written: NodeFs.Stats) => {
        const after = NodeFs.statSync(file)
        expect(after.ino, file).toBe(written.ino)
        expect(after.mtimeMs, file).toBe(written.mtimeMs)
      }
      yield* server.reply(...["one", "two", "three", "four"].map((text) => FakeReply.text(`reply ${text}`)))
      // Nothing a running agent is found by is in the folder: the chat starts on the turn's bundle (src/quick/chatProbe.ts),
      // whose cache is written at exit, after the turn set the tools' V8 flags (bin/kern.js sets them before loading it).
      yield* chat("one")
      expect(NodeFs.existsSync(client)).toBe(false)
      const turnCache = NodeFs.statSync(turn)
      expect(turnCache.size).toBeGreaterThan(1000)
      yield* chat("two")
      unchanged(turn, turnCache)
      // A stale agent.pid: the client looks for the agent, finds none, and hands over to the turn's bundle.
      NodeFs.writeFileSync(NodePath.join(dir, ".kern/agent.pid"), "")
      yield* chat("three")
      const clientCache = NodeFs.statSync(client)
      expect(clientCache.size).toBeGreaterThan(1000)
      yield* chat("four")
      unchanged(client, clientCache)
      unchanged(turn, turnCache)
    })))
})
