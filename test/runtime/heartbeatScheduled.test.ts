import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope, TestClock } from "effect"
import * as NodePath from "node:path"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import * as AgentRuntimeLive from "../../src/runtime/AgentRuntime.js"
import * as FollowupsLive from "../../src/runtime/followupsLive.js"
import { HeartbeatLog } from "../../src/runtime/HeartbeatLog.js"
import * as InboxSql from "../../src/runtime/Inbox.js"
import { servingRuntimeLayer } from "../../src/runtime/layers.js"
import { Scheduler } from "../../src/runtime/Scheduler.js"
import * as TurnLoop from "../../src/runtime/TurnLoop.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// The heartbeat is one of the Scheduler's schedules: no loop of its own fires it, the Scheduler does (on the Clock),
// and `kern schedule list` shows it beside the stored schedules; `kern schedule rm` refuses it.

const minute = 60_000

/** The agent's config in `dir`, over the fake model at `baseURL`. */
const configure = (dir: string, baseURL: string, heartbeatInterval: number) =>
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({
      model: "m",
      baseURL,
      timezone: "UTC",
      autoCommit: false,
      heartbeatInterval,
      budget: { maxLatencyMs: 24 * 60 * minute }
    })
  })

/** The running agent (serving: the turn loop and the Scheduler) in `dir` until its scope closes; its heartbeat record. */
const serving = (dir: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const layer = servingRuntimeLayer.pipe(
      Layer.provideMerge(agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 })),
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    )
    const context = yield* Layer.buildWithScope(layer, scope)
    const state = Effect.flatMap(HeartbeatLog, (log) => log.state).pipe(
      Effect.provide(HeartbeatLog.Default),
      Effect.provideService(SqlClient.SqlClient, Context.get(context, SqlClient.SqlClient))
    )
    return { state, stop: Scope.close(scope, Exit.void) }
  })

describe("the heartbeat as a schedule", () => {
  it.scoped("is fired by the Scheduler (none without it), listed by kern schedule list, and not removed by kern schedule rm", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = NodePath.join(makeTempDir(), "agent")
      configure(dir, server.baseURL, 30)
      // The agent serving turns, with no Scheduler running.
      const layer = TurnLoop.layer.pipe(
        Layer.provideMerge(FollowupsLive.layer.pipe(Layer.provide(InboxSql.layerSql))),
        Layer.provideMerge(AgentRuntimeLive.layer),
        Layer.provideMerge(agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 })),
        Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
        Layer.provide(NodeContext.layer)
      )
      const context = yield* Layer.build(layer)
      const runtime = Context.get(context, AgentRuntime)
      const state = Effect.flatMap(HeartbeatLog, (log) => log.state).pipe(
        Effect.provide(HeartbeatLog.Default),
        Effect.provideService(SqlClient.SqlClient, Context.get(context, SqlClient.SqlClient))
      )

      // Without the Scheduler no heartbeat is due and none fires: nothing else drives it.
      yield* TestClock.adjust("45 minutes")
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow()
      expect((yield* server.requests).length).toBe(0)
      expect((yield* state).nextAtMs).toBeNull()
      const off = JSON.parse((yield* Effect.promise(() => runKernIn(["schedule", "list", dir, "--json"]))).stdout)
      expect(off[0]).toMatchObject({ id: 0, kind: "heartbeat", when: "every 30 min", next: null, nextDueMs: null })

      // The Scheduler starts: the heartbeat is due an interval from now, listed as schedule 0.
      const schedulerScope = yield* Scope.make()
      const scheduler = yield* Layer.buildWithScope(Scheduler.Default, schedulerScope).pipe(Effect.provide(context))
      yield* Effect.forkIn(Context.get(scheduler, Scheduler).run, schedulerScope)
      while ((yield* state).nextAtMs !== 75 * minute) yield* Effect.yieldNow()
      const listed = yield* Effect.promise(() => runKernIn(["schedule", "list", dir, "--json"]))
      expect(listed.status, listed.stderr).toBe(0)
      expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({
        id: 0,
        kind: "heartbeat",
        when: "every 30 min",
        timezone: "UTC",
        next: "1970-01-01T01:15:00+00:00",
        nextDueMs: 75 * minute
      })])
      const table = yield* Effect.promise(() => runKernIn(["schedule", "list", dir]))
      expect(table.stdout).toContain("0 (heartbeat)")
      expect(table.stdout).toContain("1970-01-01T01:15:00+00:00")

      const rm = yield* Effect.promise(() => runKernIn(["schedule", "rm", "0", dir]))
      expect(rm.status).toBe(1)
      expect(rm.stderr).toContain("schedule 0 is the heartbeat")
      expect(rm.stderr).toContain("set heartbeatInterval: 0 in .kern/config.json")

      // Due: the Scheduler fires its tick (a fresh runtime assumes something happened: not skipped), and the next is due.
      yield* server.reply(FakeReply.text("NO_REPLY"))
      yield* TestClock.adjust("30 minutes")
      const [beat] = yield* server.awaitRequests(1)
      expect(JSON.stringify(beat!.body)).toContain("[heartbeat]")
      for (let i = 0; i < 10_000 && !(yield* runtime.idle); i++) yield* Effect.yieldNow()
      while ((yield* state).outcome !== "ran") yield* Effect.yieldNow()
      expect(yield* state).toMatchObject({ lastAtMs: 75 * minute, nextAtMs: 105 * minute })

      // The Scheduler stops: no tick is due, and none fires.
      yield* Scope.close(schedulerScope, Exit.void)
      expect((yield* state).nextAtMs).toBeNull()
      yield* TestClock.adjust("2 hours")
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow()
      expect((yield* server.requests).length).toBe(1)
    }), 120_000)

  it.scoped("a change of heartbeatInterval in config takes effect at the next start: shorter, due sooner; 0, none and not listed", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = NodePath.join(makeTempDir(), "agent")
      configure(dir, server.baseURL, 120)
      const first = yield* serving(dir)
      while ((yield* first.state).nextAtMs !== 120 * minute) yield* Effect.yieldNow()
      yield* TestClock.adjust("10 minutes")
      yield* first.stop

      // Shortened to 30: the tick kept from before (at 120) is further off than an interval, so it is due at 10 + 30.
      configure(dir, server.baseURL, 30)
      const second = yield* serving(dir)
      while ((yield* second.state).nextAtMs !== 40 * minute) yield* Effect.yieldNow()
      const listed = JSON.parse((yield* Effect.promise(() => runKernIn(["schedule", "list", dir, "--json"]))).stdout)
      expect(listed).toEqual([expect.objectContaining({ id: 0, kind: "heartbeat", when: "every 30 min", nextDueMs: 40 * minute })])
      yield* second.stop

      // Off: no tick is due and none fires; the listing has no heartbeat.
      configure(dir, server.baseURL, 0)
      const third = yield* serving(dir)
      yield* TestClock.adjust("3 hours")
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow()
      expect((yield* third.state).nextAtMs).toBeNull()
      expect((yield* server.requests).length).toBe(0)
      const off = yield* Effect.promise(() => runKernIn(["schedule", "list", dir, "--json"]))
      expect(JSON.parse(off.stdout)).toEqual([])
      yield* third.stop
    }), 120_000)
})
