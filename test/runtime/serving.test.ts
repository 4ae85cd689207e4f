import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, HashMap, Layer, Logger, LogLevel, Option, PubSub, Queue, Schema, Scope, TestClock } from "effect"
import * as NodePath from "node:path"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { HeartbeatLog } from "../../src/runtime/HeartbeatLog.js"
import * as Layers from "../../src/runtime/layers.js"
import * as Database from "../../src/storage/Database.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import { testAgentDir } from "../support/testAgentDir.js"

// The running agent's serving features (src/runtime/layers.ts): the turn loop and the heartbeat serve from the moment
// runningAgentLayer is built and stop when its scope closes; channels attached with it see every turn.

const hold = { command: "kern test", waitSeconds: 10 }
const provided = <A, E>(layer: Layer.Layer<A, E, ProcessEnv | Layer.Layer.Success<typeof NodeContext.layer>>) =>
  layer.pipe(Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })), Layer.provide(NodeContext.layer))

const agentDir = (server: FakeModelServerShape, config: Record<string, unknown> = {}) =>
  testAgentDir({ baseURL: server.baseURL, ...config })

/** A channel as the test sees it: the agent's turn events, subscribed when the channel is built. */
class Seen extends Context.Tag("test/Seen")<Seen, Queue.Dequeue<TurnEvent>>() {}
const seenLayer = Layer.scoped(Seen, Effect.flatMap(AgentRuntime, (runtime) => PubSub.subscribe(runtime.events)))

/** The running agent with the test's channel attached, in a scope of its own. */
const start = (dir: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(provided(Layers.runningAgentLayerWith(dir, hold, seenLayer)), scope)
    return { runtime: Context.get(context, AgentRuntime), seen: Context.get(context, Seen), stop: Scope.close(scope, Exit.void) }
  })

/** The events of the next turn to finish, from its first. */
const nextTurn = (seen: Queue.Dequeue<TurnEvent>) =>
  Effect.gen(function*() {
    const events: Array<TurnEvent> = []
    for (;;) {
      const event = yield* Queue.take(seen)
      events.push(event)
      if (event.type === "finish") return events
    }
  }).pipe(Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error("no turn finished") }))

const Count = Schema.Array(Schema.Struct({ n: Schema.Number }))

/** kern.db read on a connection of its own (the agent's is closed). */
const fromDb = <A, E>(dir: string, read: Effect.Effect<A, E, SqlClient.SqlClient | HeartbeatLog>) =>
  read.pipe(
    Effect.provide(HeartbeatLog.Default.pipe(Layer.provideMerge(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })))),
    Effect.orDie
  )

const inboxSize = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*) AS n FROM inbox`).pipe(
  Effect.flatMap(Schema.decodeUnknown(Count)),
  Effect.map((rows) => rows[0]?.n ?? -1)
)

describe("the running agent's serving layers", () => {
  it.scopedLive("the turn loop serves once the layer is built and stops with its scope, interrupting the turn that runs", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentDir(server)
      const agent = yield* start(dir)
      // Nobody calls step: the layer serves.
      yield* server.reply(FakeReply.text("served"))
      const served = yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "hello" })
      const turn = yield* nextTurn(agent.seen)
      expect(turn[0]).toMatchObject({ type: "incoming", turnId: served.turnId, text: "hello" })
      expect(turn.at(-1)).toMatchObject({ type: "finish", reply: "served" })

      // A turn hanging on the model when the scope closes: closing interrupts it rather than wait for its answer.
      yield* server.reply(FakeReply.text("too late", { delay: "10 minutes" }))
      yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "still running" })
      yield* server.awaitRequests(2)
      yield* agent.stop.pipe(Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error("closing waited for the turn") }))
      expect(yield* fromDb(dir, inboxSize)).toBe(0)
    }), 120_000)

  it.scopedLive("a message an earlier process left in the inbox is answered once the running agent is built, seen by its channels", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentDir(server)
      // Accepted by an agent that did not serve (the core layer alone): it is in kern.db's inbox, unanswered.
      yield* Effect.scoped(Effect.gen(function*() {
        const core = yield* Layer.build(provided(Layers.runningAgentCoreLayer(dir, hold)))
        const runtime = Context.get(core, AgentRuntime)
        yield* runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "left behind" })
        expect((yield* runtime.status).queued).toBe(1)
      }))
      expect(yield* fromDb(dir, inboxSize)).toBe(1)
      expect((yield* server.modelRequests).length).toBe(0)

      yield* server.reply(FakeReply.text("answered after the restart"))
      const agent = yield* start(dir)
      const replayed = yield* nextTurn(agent.seen)
      expect(replayed[0]).toMatchObject({ type: "incoming", text: "left behind", interface: "cli", channel: "terminal" })
      expect(replayed.at(-1)).toMatchObject({ type: "finish", reply: "answered after the restart" })
      yield* agent.stop
      expect(yield* fromDb(dir, inboxSize)).toBe(0)
    }), 120_000)

  it.scoped("the heartbeat ticks while the layer lives and never after its scope closes", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentDir(server, { heartbeatInterval: 30 })
      const agent = yield* start(dir)
      while ((yield* TestClock.sleeps()).length === 0) yield* Effect.yieldNow()
      yield* server.reply(FakeReply.text("NO_REPLY"))
      yield* TestClock.adjust("30 minutes")
      const beat = yield* nextTurn(agent.seen)
      expect(beat[0]).toMatchObject({ type: "incoming", interface: "heartbeat" })
      for (let i = 0; i < 10_000 && !(yield* agent.runtime.idle); i++) yield* Effect.yieldNow()
      yield* agent.stop
      // No tick is due any more (the heartbeat clears it as it stops), and moving time on sends none.
      expect((yield* fromDb(dir, Effect.flatMap(HeartbeatLog, (log) => log.state))).nextAtMs).toBeNull()
      yield* TestClock.adjust("3 hours")
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow()
      expect((yield* server.modelRequests).length).toBe(1)
    }), 120_000)

  it.scopedLive("each serving feature logs its start and its stop at debug, annotated with its name", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentDir(server, { heartbeatInterval: 30 })
      const lines: Array<{ readonly level: string; readonly text: string; readonly feature: unknown }> = []
      const capture = Logger.make(({ annotations, logLevel, message }) => {
        const text = Array.isArray(message) ? message.join(" ") : String(message)
        lines.push({ level: logLevel.label, text, feature: Option.getOrUndefined(HashMap.get(annotations, "feature")) })
      })
      const agent = yield* start(dir).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, capture)),
        Logger.withMinimumLogLevel(LogLevel.Debug)
      )
      yield* agent.stop
      const features = lines.filter((line) => line.feature !== undefined).map((line) => [line.level, line.feature, line.text])
      for (const feature of ["turn-loop", "schedules"]) {
        expect(features).toContainEqual(["DEBUG", feature, `${feature} started`])
        expect(features).toContainEqual(["DEBUG", feature, `${feature} stopped`])
      }
    }), 120_000)
})
