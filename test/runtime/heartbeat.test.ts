import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, DateTime, Effect, Exit, Layer, PubSub, Queue, Scope, TestClock } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { servingRuntimeLayer } from "../../src/runtime/layers.js"
import { heartbeatPrompt, withinActiveHours } from "../../src/runtime/heartbeat.js"
import { HeartbeatLog } from "../../src/runtime/HeartbeatLog.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import * as Database from "../../src/storage/Database.js"
import { knowledgeReport } from "../../src/memory/knowledge.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { eventually } from "../support/waitFor.js"

const utc = DateTime.zoneUnsafeMakeNamed("UTC")
const minute = 60_000
const hour = 60 * minute

/**
 * A running AgentRuntime over a fake model, on the TestClock, in a scope of its own (or the one given); `state` reads the
 * heartbeat's record in kern.db; `stop` closes the scope (the serving stops with it).
 */
const started = (
  config: Record<string, unknown>,
  files: Record<string, string> = {},
  at?: string,
  restartable?: { readonly scope: Scope.CloseableScope; readonly replies: ReadonlyArray<FakeReply> }
) =>
  Effect.gen(function*() {
    const server = yield* makeFakeServer
    if (restartable !== undefined) yield* server.reply(...restartable.replies)
    const dir = at ?? NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, {
      ".kern/config.json": JSON.stringify({
        model: "m",
        baseURL: server.baseURL,
        timezone: "UTC",
        autoCommit: false,
        budget: { maxLatencyMs: 24 * hour },
        ...config
      }),
      ...files
    })
    const layer = servingRuntimeLayer.pipe(
      Layer.provideMerge(agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 })),
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    )
    const scope = restartable?.scope ?? (yield* Effect.acquireRelease(Scope.make(), (scope) => Scope.close(scope, Exit.void)))
    const context = yield* Layer.buildWithScope(layer, scope)
    const runtime = Context.get(context, AgentRuntime)
    const state = Effect.flatMap(HeartbeatLog, (log) => log.state).pipe(
      Effect.provide(HeartbeatLog.Default),
      Effect.provideService(SqlClient.SqlClient, Context.get(context, SqlClient.SqlClient))
    )
    if (config["heartbeatInterval"] !== 0) while ((yield* TestClock.sleeps()).length === 0) yield* Effect.yieldNow()
    return { server, runtime, state, stop: Scope.close(scope, Exit.void), dir }
  })

/**
 * Starts the agent of `dir` (heartbeat every 30 minutes) in a scope of its own, the model answering `replies`, once its
 * heartbeat has said when it is next due: a test stops it and starts it again over the same folder.
 */
const restarted = (dir: string) => (...replies: ReadonlyArray<FakeReply>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const agent = yield* started({ heartbeatInterval: 30 }, {}, dir, { scope, replies })
    while ((yield* agent.state).nextAtMs === null) yield* Effect.yieldNow()
    return agent
  })

/** The heartbeat's record, read from kern.db on a connection of its own (the agent's may be closed). */
const stateOf = (dir: string) =>
  Effect.flatMap(HeartbeatLog, (log) => log.state).pipe(
    Effect.provide(HeartbeatLog.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })))),
    Effect.orDie
  )

/** The heartbeat prompts the model was sent, in order. */
const heartbeatsSent = (server: FakeModelServerShape) =>
  Effect.map(server.requests, (requests) =>
    requests.filter((r) => {
      const messages = (r.body as { messages?: ReadonlyArray<{ role: string; content: unknown }> }).messages ?? []
      return String(messages.filter((m) => m.role === "user").at(-1)?.content ?? "").includes("[heartbeat]")
    }))

/** Waits until the runtime has nothing queued or running. */
const settle = (runtime: AgentRuntime) =>
  Effect.gen(function*() {
    for (let i = 0; i < 10_000 && !(yield* runtime.idle); i++) yield* Effect.yieldNow()
    yield* Effect.sleep("1 millis").pipe(Effect.fork, Effect.zipRight(TestClock.adjust("1 millis")))
  })

describe("heartbeat", () => {
  it("activeHours: start included, end excluded, overnight ranges, in the agent's zone", () => {
    const at = (h: number, m = 0) => Date.UTC(2026, 0, 2, h, m)
    expect(withinActiveHours(undefined, at(3), utc)).toBe(true)
    expect(withinActiveHours("08:00-22:00", at(7, 59), utc)).toBe(false)
    expect(withinActiveHours("08:00-22:00", at(8), utc)).toBe(true)
    expect(withinActiveHours("08:00-22:00", at(21, 59), utc)).toBe(true)
    expect(withinActiveHours("08:00-22:00", at(22), utc)).toBe(false)
    expect(withinActiveHours("22:00-06:00", at(23), utc)).toBe(true)
    expect(withinActiveHours("22:00-06:00", at(5, 59), utc)).toBe(true)
    expect(withinActiveHours("22:00-06:00", at(12), utc)).toBe(false)
    // 07:30 UTC is 08:30 in Berlin (winter): inside there, outside in UTC.
    expect(withinActiveHours("08:00-22:00", at(7, 30), DateTime.zoneUnsafeMakeNamed("Europe/Berlin"))).toBe(true)
  })

  it("the prompt names today's note and the knowledge that needs care", () => {
    const text = heartbeatPrompt("2026-01-02", { stale: [{ file: "knowledge/hosts.md", days: 45 }], unindexed: ["knowledge/new.md"] })
    expect(text).toMatch(/^\[heartbeat\] /)
    expect(text).toContain("notes/2026-01-02.md")
    expect(text).toContain("knowledge/hosts.md (45 days)")
    expect(text).toContain("KNOWLEDGE.md does not mention these files; add a line for each: knowledge/new.md.")
    expect(heartbeatPrompt("2026-01-02", { stale: [], unindexed: [] })).not.toContain("knowledge")
  })

  it.effect("knowledge report: files unchanged for staleKnowledgeDays (on the Clock) and files the index does not mention", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      writeFiles(dir, {
        "KNOWLEDGE.md": "- hosts.md: machines\n- knowledge/net/vpn.md: the VPN\n",
        "knowledge/hosts.md": "web1\n",
        "knowledge/net/vpn.md": "wireguard\n",
        "knowledge/fresh.md": "new\n",
        "knowledge/notes.txt": "not knowledge\n"
      })
      const now = Date.UTC(2026, 5, 1)
      NodeFs.utimesSync(NodePath.join(dir, "knowledge/hosts.md"), new Date(now - 31 * 24 * hour), new Date(now - 31 * 24 * hour))
      NodeFs.utimesSync(NodePath.join(dir, "knowledge/net/vpn.md"), new Date(now - 29 * 24 * hour), new Date(now - 29 * 24 * hour))
      NodeFs.utimesSync(NodePath.join(dir, "knowledge/fresh.md"), new Date(now), new Date(now))
      yield* TestClock.setTime(now)
      const report = yield* knowledgeReport(dir, 30).pipe(Effect.provide(NodeContext.layer))
      expect(report.stale).toEqual([{ file: "knowledge/hosts.md", days: 31 }])
      expect(report.unindexed).toEqual(["knowledge/fresh.md"])
      const none = yield* knowledgeReport(makeTempDir(), 30).pipe(Effect.provide(NodeContext.layer))
      expect(none).toEqual({ stale: [], unindexed: [] })
    }))

  it.scoped("cheap first: a tick with nothing new makes no model call and records why; a user message makes the next one run", () =>
    Effect.gen(function*() {
      const { dir, runtime, server, state, stop } = yield* started({ heartbeatInterval: 30 })
      // What channels show of the heartbeat (the web UI's heartbeat events).
      const notices = yield* PubSub.subscribe(runtime.heartbeats)
      expect((yield* state).nextAtMs).toBe(30 * minute)
      yield* server.reply(FakeReply.text("NO_REPLY"))
      yield* TestClock.adjust("30 minutes")
      yield* server.awaitRequests(1)
      yield* settle(runtime)
      expect(yield* state).toMatchObject({ outcome: "ran", reason: "nothing to report", nextAtMs: 60 * minute })
      const ran = Chunk.toReadonlyArray(yield* Queue.takeAll(notices))
      expect(ran.map((n) => n.outcome)).toEqual(["sent", "ran"])
      expect(ran[1]).toMatchObject({ reason: "nothing to report", turnId: ran[0]!.turnId })
      const [first] = yield* heartbeatsSent(server)
      expect(JSON.stringify(first!.body)).toContain("notes/1970-01-01.md")

      yield* TestClock.adjust("30 minutes")
      // The tick runs on the heartbeat's fiber: its notice says it is done (a busy machine may be slower to get there).
      expect(yield* Queue.take(notices)).toEqual({ outcome: "skipped", reason: "nothing happened since the last heartbeat" })
      // The next tick is scheduled just after the notice.
      while ((yield* state).nextAtMs !== 90 * minute) yield* Effect.yieldNow()
      yield* settle(runtime)
      expect((yield* server.requests).length).toBe(1)
      expect(yield* state).toMatchObject({
        lastAtMs: 60 * minute,
        outcome: "skipped",
        reason: "nothing happened since the last heartbeat",
        nextAtMs: 90 * minute
      })
      expect(Chunk.toReadonlyArray(yield* Queue.takeAll(notices))).toEqual([])

      yield* server.reply(FakeReply.text("hello"), FakeReply.text("Saved. NO_REPLY"))
      yield* runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "hi" })
      yield* server.awaitRequests(2)
      yield* settle(runtime)
      yield* TestClock.adjust("30 minutes")
      yield* server.awaitRequests(3)
      yield* settle(runtime)
      expect((yield* heartbeatsSent(server)).length).toBe(2)
      expect((yield* state).outcome).toBe("ran")
      // Once the serving layer's scope closes, no tick is due (and none comes: the heartbeat's fiber is gone).
      yield* stop
      expect((yield* stateOf(dir)).nextAtMs).toBeNull()
      yield* TestClock.adjust("2 hours")
      expect((yield* heartbeatsSent(server)).length).toBe(2)
    }))

  it.scoped("stale or unindexed knowledge is reason enough to run, and the prompt names the files", () =>
    Effect.gen(function*() {
      const { runtime, server, state } = yield* started({ heartbeatInterval: 60 }, { "knowledge/hosts.md": "web1\n" })
      yield* server.reply(FakeReply.text("NO_REPLY"), FakeReply.text("NO_REPLY"))
      yield* TestClock.adjust("60 minutes")
      yield* server.awaitRequests(1)
      yield* settle(runtime)
      yield* TestClock.adjust("60 minutes")
      const [, second] = yield* server.awaitRequests(2)
      expect(JSON.stringify(second!.body)).toContain("add a line for each: knowledge/hosts.md")
      yield* settle(runtime)
      expect((yield* state).outcome).toBe("ran")
    }))

  it.scoped("never piles up: ticks during a long turn are skipped, and one heartbeat runs after it", () =>
    Effect.gen(function*() {
      const { runtime, server, state } = yield* started({ heartbeatInterval: 30 })
      // A turn of 20 steps, each answered after 4 minutes: 80 minutes in all, across the ticks at 30 and 60.
      const steps = 20
      yield* server.reply(
        ...Array.from({ length: steps }, (_, i) =>
          FakeReply.toolCalls([{ id: `c${i}`, name: "glob", args: { pattern: "*.md" } }], { delay: "4 minutes" })),
        FakeReply.text("done"),
        FakeReply.text("NO_REPLY")
      )
      yield* runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "think hard" })
      for (let k = 1; k <= steps; k++) {
        yield* server.awaitRequests(k)
        yield* TestClock.adjust("4 minutes")
        if (k === 16) {
          expect(yield* state).toMatchObject({ lastAtMs: 60 * minute, outcome: "skipped", reason: "the previous heartbeat is still queued or running" })
        }
      }
      yield* server.awaitRequests(steps + 2)
      yield* settle(runtime)
      expect((yield* heartbeatsSent(server)).length).toBe(1)
      expect(yield* state).toMatchObject({ lastAtMs: 30 * minute, outcome: "ran" })
    }))

  it.scoped("activeHours: no heartbeat before 08:00 in the agent's zone, then it runs", () =>
    Effect.gen(function*() {
      const { runtime, server, state } = yield* started({ heartbeatInterval: 60, activeHours: "08:00-22:00" })
      yield* server.reply(FakeReply.text("NO_REPLY"))
      yield* TestClock.adjust("7 hours")
      yield* settle(runtime)
      expect((yield* server.requests).length).toBe(0)
      expect(yield* state).toMatchObject({ lastAtMs: 7 * hour, outcome: "skipped", reason: "outside activeHours (08:00-22:00)" })
      yield* TestClock.adjust("1 hour")
      yield* server.awaitRequests(1)
      yield* settle(runtime)
      expect(yield* state).toMatchObject({ lastAtMs: 8 * hour, outcome: "ran" })
    }))

  it.scoped("the next tick is kept across a restart, and one missed while the agent was down fires once", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "agent")
      const run = restarted(dir)

      const first = yield* run()
      expect((yield* first.state).nextAtMs).toBe(30 * minute)
      yield* TestClock.adjust("20 minutes")
      yield* first.stop

      // Restarted 20 minutes in: the tick is still due at 30, not 30 minutes from now.
      const second = yield* run(FakeReply.text("NO_REPLY"))
      expect((yield* second.state).nextAtMs).toBe(30 * minute)
      yield* TestClock.adjust("10 minutes")
      yield* second.server.awaitRequests(1)
      yield* settle(second.runtime)
      while ((yield* second.state).nextAtMs !== 60 * minute) yield* Effect.yieldNow()
      yield* second.stop

      // Down from 30 minutes to 150 (the ticks due at 60, 90, 120 and 150 missed): one tick at the start, then every 30.
      // The heartbeat at 30 saw everything and nothing came since (kept in kern.db): that tick makes no model call.
      yield* TestClock.adjust("2 hours")
      const third = yield* run()
      while ((yield* third.state).outcome !== "skipped") yield* Effect.yieldNow()
      const fired = yield* third.state
      expect(fired.reason).toBe("nothing happened since the last heartbeat")
      expect(fired.lastAtMs! - 150 * minute).toBeLessThan(minute)
      while ((yield* third.state).nextAtMs !== fired.lastAtMs! + 30 * minute) yield* Effect.yieldNow()
      yield* TestClock.adjust("29 minutes")
      yield* settle(third.runtime)
      expect(yield* third.state).toMatchObject({ lastAtMs: fired.lastAtMs })
      expect((yield* third.server.requests).length).toBe(0)
      yield* third.stop
    }))

  it.scoped("whether anything happened since the last heartbeat is kept in kern.db: a woken agent's heartbeat calls the model only if something did", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "agent")
      const run = restarted(dir)
      const tickAt = (agent: { readonly state: typeof first.state }, atMs: number) =>
        Effect.gen(function*() {
          while ((yield* agent.state).lastAtMs !== atMs) yield* Effect.yieldNow()
          return yield* agent.state
        })

      // A new agent: nothing is known of an earlier process, so its first heartbeat runs.
      const first = yield* run(FakeReply.text("NO_REPLY"))
      yield* TestClock.adjust("30 minutes")
      yield* first.server.awaitRequests(1)
      yield* settle(first.runtime)
      expect(yield* tickAt(first, 30 * minute)).toMatchObject({ outcome: "ran" })
      yield* first.stop

      // Passivated, then woken for its next heartbeat (a new runtime): nothing came since, so no model call.
      yield* TestClock.adjust("29 minutes")
      const second = yield* run()
      yield* TestClock.adjust("1 minute")
      expect(yield* tickAt(second, 60 * minute)).toMatchObject({ outcome: "skipped", reason: "nothing happened since the last heartbeat" })
      yield* settle(second.runtime)
      expect((yield* second.server.requests).length).toBe(0)
      // A message comes while it is live; it is passivated before its next heartbeat.
      yield* second.server.reply(FakeReply.text("hello"))
      yield* second.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "hi" })
      yield* second.server.awaitRequests(1)
      yield* settle(second.runtime)
      yield* second.stop

      // Woken for the next one: the message is remembered across the restart, so this heartbeat runs.
      yield* TestClock.adjust("29 minutes")
      const third = yield* run(FakeReply.text("Saved. NO_REPLY"))
      yield* TestClock.adjust("1 minute")
      yield* third.server.awaitRequests(1)
      yield* settle(third.runtime)
      expect(yield* tickAt(third, 90 * minute)).toMatchObject({ outcome: "ran" })
      expect((yield* heartbeatsSent(third.server)).length).toBe(1)
      yield* third.stop
    }))

  it.scoped("the runtime commits the memory files a turn changed", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, { "AGENTS.md": "# agents\n" })
      const git = (...args: ReadonlyArray<string>) =>
        spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" }).stdout
      git("init", "-q", "-b", "main")
      git("add", "AGENTS.md")
      git("commit", "-q", "-m", "init")
      const { runtime, server } = yield* started({ heartbeatInterval: 0, autoCommit: true }, {}, dir)
      yield* server.reply(
        FakeReply.toolCalls([{ id: "w", name: "write", args: { path: "notes/1970-01-01.md", content: "met the operator\n" } }]),
        FakeReply.text("Noted.")
      )
      yield* runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "note this" })
      yield* server.awaitRequests(2)
      yield* settle(runtime)
      yield* eventually(() => git("log", "--format=%s").trim().split("\n").length >= 2)
      expect(git("log", "-1", "--format=%s").trim()).toBe("kern: memory notes/1970-01-01.md")
    }))
})
