import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import * as AgentRuntimeLive from "../../src/runtime/AgentRuntime.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { EventLog } from "../../src/kernel/EventLog.js"
import { holdWriteLock } from "../support/dbLock.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const runtimeLayer = (dir: string) =>
  AgentRuntimeLive.layer.pipe(
    Layer.provideMerge(agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 30 })),
    Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
    Layer.provide(NodeContext.layer)
  )

/** Polls `check` until it holds (a condition, not a time), failing after a generous bound. */
const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, what: string) =>
  Effect.gen(function*() {
    while (!(yield* check)) yield* Effect.sleep("100 millis")
  }).pipe(Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error(`never: ${what}`) }))

describe("kern.db locked by another process during a turn", () => {
  it.scopedLive("the message is answered exactly once across a restart, and the turn's audit events are written once the lock is gone", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", baseURL: server.baseURL, recall: false, autoCommit: false }) })
      const dbFile = NodePath.join(dir, ".kern", "kern.db")

      const first = yield* Scope.make()
      const built = yield* Layer.buildWithScope(runtimeLayer(dir), first)
      const runtime = Context.get(built, AgentRuntime)
      const events = Context.get(built, EventLog)
      const queued = yield* runtime.submit({ interface: "web", channel: "web", userId: "operator", text: "hello once" })

      const lock = yield* holdWriteLock(dbFile)
      yield* server.reply(FakeReply.text("the one answer"))
      const outcome = yield* runtime.step
      expect(outcome.reply).toBe("the one answer")
      yield* lock.release

      // Kept while kern.db was locked, written once it is free.
      yield* eventually(
        Effect.map(events.recent(50), (recent) =>
          ["kernel.run.started", "kernel.run.finished"].every((key) => recent.some((event) => event.decisionKey === key))),
        "the turn's audit events reached kern.db"
      )
      yield* Scope.close(first, Exit.void)

      // A restart: the message is in the session, so it leaves the inbox instead of being answered again.
      const second = yield* Scope.make()
      const restarted = Context.get(yield* Layer.buildWithScope(runtimeLayer(dir), second), AgentRuntime)
      const status = yield* restarted.status
      expect({ queued: status.queued, inbox: status.inbox }).toEqual({ queued: 0, inbox: 0 })
      yield* Scope.close(second, Exit.void)
      expect((yield* server.modelRequests).length).toBe(1)
      const sessionFiles = NodeFs.readdirSync(NodePath.join(dir, ".kern", "sessions")).filter((name) => name.endsWith(".jsonl"))
      const users = sessionFiles.flatMap((name) =>
        NodeFs.readFileSync(NodePath.join(dir, ".kern", "sessions", name), "utf8").split("\n").filter((line) => line.includes("\"_tag\":\"user\""))
      )
      expect(users.map((line) => JSON.parse(line))).toMatchObject([{ text: "hello once", inboxId: Number(queued.turnId) }])
    }), { timeout: 180_000 })
})
