import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, Layer, type Random, Schedule, Scope } from "effect"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { type ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as EventLog from "../../src/kernel/EventLog.js"
import * as Database from "../../src/storage/Database.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir } from "../support/tempDir.js"

interface Row {
  readonly decisionKey: string
  readonly runId: string
  readonly toolId: string | null
  readonly status: string
}

/** kern.db's kernel_events as another process sees them: a connection of its own, opened for this read. */
const eventsOnDisk = (file: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Row>`SELECT decision_key, run_id, tool_id, status FROM kernel_events ORDER BY event_id`).pipe(
    Effect.provide(Database.layer({ filename: file })),
    Effect.orDie
  )

const event = (runId: string, n: number): EventLog.EventInput => ({
  decisionKey: "kernel.tool.dispatch",
  runId,
  traceId: "trace",
  toolId: `tool.${n}`,
  status: "ok",
  latencyMs: n + 0.5,
  contractMismatch: n % 2 === 0
})

/** The SQLite event log on the kern.db at `file`, in a scope the test closes. */
const openLog = (file: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(EventLog.layerSql.pipe(Layer.provide(KnownSecrets.layerNone)).pipe(Layer.provide(Database.layer({ filename: file }))), scope)
    return { log: Context.get(context, EventLog.EventLog), scope }
  })

describe("EventLog on an on-disk kern.db", () => {
  it.live("queued events are in kern.db, in order and whole, for another connection once flush returns", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "kern.db")
      const { log, scope } = yield* openLog(file)
      // 600 events recorded without a yield: more than any one chunk, written by one flush.
      for (let n = 0; n < 600; n++) yield* log.record(event("run-a", n))
      yield* log.flush
      const written = yield* eventsOnDisk(file)
      expect(written).toHaveLength(600)
      expect(written.map((row) => row.toolId)).toEqual(Array.from({ length: 600 }, (_, n) => `tool.${n}`))
      const read = yield* log.byRun("run-a")
      expect(read[3]).toMatchObject({ toolId: "tool.3", latencyMs: 3.5, contractMismatch: false, status: "ok" })
      expect(read[4]?.contractMismatch).toBe(true)
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("a run's own event is in kern.db when recordRunEvent returns, with every event recorded before it", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "kern.db")
      const { log, scope } = yield* openLog(file)
      yield* log.record(event("run-b", 1))
      yield* EventLog.recordRunEvent(log, { runId: "run-b", traceId: "t", sessionId: "s" }, "kernel.run.finished", "ok", {})
      expect((yield* eventsOnDisk(file)).map((row) => row.decisionKey)).toEqual(["kernel.tool.dispatch", "kernel.run.finished"])
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("closing the log's scope writes what is still queued", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "kern.db")
      const { log, scope } = yield* openLog(file)
      for (let n = 0; n < 5; n++) yield* log.record(event("run-c", n))
      yield* Scope.close(scope, Exit.void)
      expect(yield* eventsOnDisk(file)).toHaveLength(5)
    }))
})

describe("EventLog's own journal replaced when full", () => {
  it.effect("an event recorded while the next journal's name is drawn is not deleted with the full journal", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "kern.db")
      const { log, scope } = yield* openLog(file)
      // Past the 4 MiB a journal is replaced at: 48 events of 96 KiB.
      const detail = "x".repeat(96 * 1024)
      for (let n = 0; n < 48; n++) yield* log.record({ ...event("run-full", n), detail })
      // The flush draws the next journal's name from its Random: another fiber records an event right then (once).
      const base = yield* Effect.random
      let gap = true
      const racing: Random.Random = Object.assign(Object.create(base) as Random.Random, {
        nextIntBetween: (min: number, max: number) =>
          Effect.zipRight(
            gap ? Effect.zipRight(Effect.sync(() => { gap = false }), log.record(event("run-gap", 0))) : Effect.void,
            base.nextIntBetween(min, max)
          )
      })
      yield* Effect.withRandom(log.flush, racing)
      expect(gap).toBe(false)
      yield* log.flush
      yield* log.flush
      const written = yield* eventsOnDisk(file)
      expect(written.filter((row) => row.runId === "run-gap")).toHaveLength(1)
      expect(written).toHaveLength(49)
      // The full journal was replaced and deleted once all of it was in kern.db.
      expect(NodeFs.readdirSync(NodePath.join(NodePath.dirname(file), "audit")).length).toBe(1)
      yield* Scope.close(scope, Exit.void)
    }))
})

describe("kern killed with SIGKILL after a tool call", () => {
  it.live("the call's audit event was journaled before the result went back to the model: the restart writes it to kern.db once", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      // The second answer never ends: kern is mid-turn, the tool's result already sent, when it is killed.
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "read", args: { path: "IDENTITY.md" } }]),
        FakeReply.text("never finished", { hangAfter: 0 })
      )
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["run"], { cwd: dir, env: { OPENROUTER_API_KEY: "sk-test" }, stdin: true, onSpawn: (spawned) => (child = spawned) })
      child!.stdin!.write("read your identity\n")
      let asked = 0
      const sent = yield* Effect.repeat(
        Effect.map(server.modelRequests, (requests) => (asked = requests.length)),
        { schedule: Schedule.spaced("50 millis"), until: (count) => count >= 2 }
      ).pipe(Effect.zipRight(Effect.succeed(true)), Effect.timeoutTo({ duration: "90 seconds", onTimeout: () => false, onSuccess: (ok) => ok }))
      expect(sent, `the model was asked ${asked} time(s)`).toBe(true)
      expect(JSON.stringify((yield* server.modelRequests)[1]?.body)).toContain("IDENTITY")
      child!.kill("SIGKILL")
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBeNull()
      // The restart replays the killed process's audit journal: the call's event once, whenever its batch ran.
      const file = NodePath.join(dir, ".kern", "kern.db")
      yield* Effect.scoped(Layer.build(EventLog.layerSql.pipe(Layer.provide(Layer.merge(Database.layer({ filename: file }), KnownSecrets.layerNone))))).pipe(Effect.orDie)
      const events = yield* eventsOnDisk(file)
      expect(events.filter((row) => row.decisionKey === "kernel.tool.dispatch")).toEqual([
        expect.objectContaining({ toolId: "read", status: "ok" })
      ])
      expect(events.some((row) => row.decisionKey === "kernel.run.started")).toBe(true)
    })))
})
