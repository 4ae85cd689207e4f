import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, PubSub, Queue, Ref, TestClock } from "effect"
import * as NodePath from "node:path"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { SpendGuard } from "../../src/model/SpendGuard.js"
import { spendLines } from "../../src/model/spendStatus.js"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { failureTextFor } from "../../src/channels/failureText.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// The fake model's every answer: 12 prompt + 7 output tokens. At $1000 per million tokens each way, 1.9¢ a call.
const prices = { "test-model": { input: 1000, output: 1000 } }

const agentDir = (config: Record<string, unknown>) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, { ".kern/config.json": JSON.stringify(config), "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n" })
  return dir
}

const runtimeOver = (dir: string) =>
  agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
    Layer.provide(NodeContext.layer)
  )

const configFor = (server: FakeModelServerShape, limits: Record<string, unknown>) => ({
  model: "test-model",
  baseURL: server.baseURL,
  api: "chat",
  timezone: "UTC",
  recall: false,
  embeddingModel: false,
  heartbeatInterval: 0,
  prices,
  limits
})

/** One turn of `userId`'s message over the web interface (their own channel): its outcome and events. */
const turnOf = (userId: string, text: string) =>
  Effect.scoped(Effect.gen(function*() {
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const { session } = yield* openActiveSession()
    yield* queue.offer({ interface: "web", channel: `web:${userId}`, userId, text })
    const message = yield* queue.next
    const events = yield* Ref.make<ReadonlyArray<TurnEvent>>([])
    const outcome = yield* runner.run({ message, session, emit: (event) => Ref.update(events, (all) => [...all, event]) })
    yield* queue.endTurn(message.conversation)
    return { outcome, events: yield* Ref.get(events) }
  }))

const noticeCount = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ readonly n: number }>`SELECT count(*) AS n FROM notices WHERE key LIKE 'limits.%'`, (rows) => rows[0]?.n ?? 0))

describe("the spend ceiling", () => {
  it.scoped("a perDay cap reached mid-turn refuses the turn's next model call; told once; the next day answers", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentDir(configFor(server, { perDay: { usdCents: 1.5 } }))
      yield* Effect.gen(function*() {
        const guard = yield* SpendGuard
        const told = yield* PubSub.subscribe(guard.reached)
        yield* server.reply(FakeReply.toolCalls([{ id: "c1", name: "glob", args: { pattern: "*.md" } }]))
        const first = yield* turnOf("u1", "look around")
        // Step 1 cost 1.9¢ ≥ 1.5¢: step 2 was refused before any request was made.
        expect((yield* server.modelRequests).length).toBe(1)
        expect(first.outcome.failure).toMatchObject({
          _tag: "BudgetExceeded",
          code: "BUDGET_EXCEEDED",
          cap: "perDay",
          measure: "usdCents",
          limit: 1.5,
          key: "",
          day: "1970-01-01"
        })
        expect(first.outcome.failure?.message).toContain("limits.perDay.usdCents (1.50¢)")
        expect(first.outcome.failure?.message).toContain("1.90¢ spent")
        expect(first.events.some((e) => e.type === "error" && e.message.startsWith("BUDGET_EXCEEDED"))).toBe(true)
        // A chat user reads which cap, not its figures.
        expect(failureTextFor({ userId: "42" }, first.outcome.failure!.message, { ...first.outcome.failure! } as never)).toContain("I have reached my daily limit")

        // The runtime goes on serving: the next message is refused at once, without a request.
        const second = yield* turnOf("u2", "hello?")
        expect(second.outcome.failure).toMatchObject({ _tag: "BudgetExceeded", cap: "perDay" })
        expect((yield* server.modelRequests).length).toBe(1)
        // The operator was told once for the cap and day, however many calls it refused.
        const notices = yield* Queue.takeAll(told)
        expect([...notices].map((n) => `${n.cap}.${n.measure}:${n.day}`)).toEqual(["perDay.usdCents:1970-01-01"])
        expect(yield* noticeCount).toBe(1)
        const status = yield* guard.today
        expect(status.agent).toMatchObject({ calls: 1, inputTokens: 12, outputTokens: 7 })
        expect(status.reached).toEqual([{ cap: "perDay", measure: "usdCents", key: "", limit: 1.5, spent: 1.9 }])
        expect(spendLines(status).join("\n")).toContain("1.90¢ of 1.5¢")

        // The day rolls over (UTC midnight): the cap has room again.
        yield* TestClock.adjust("1 day")
        yield* server.reply(FakeReply.text("Hello again."))
        const third = yield* turnOf("u1", "still there?")
        expect(third.outcome).toMatchObject({ reply: "Hello again." })
        expect(third.outcome.failure).toBeUndefined()
        // That answer cost 1.9¢ of the new day's 1.5¢: reached again, and told again, once for this day.
        const nextDay = yield* guard.today
        expect(nextDay).toMatchObject({ day: "1970-01-02", agent: { calls: 1 }, reached: [{ cap: "perDay", spent: 1.9 }] })
        expect([...(yield* Queue.takeAll(told))].map((n) => n.day)).toEqual(["1970-01-02"])
        expect(yield* noticeCount).toBe(2)
      }).pipe(Effect.provide(runtimeOver(dir)))
    }))

  it.scoped("perUser hits one user and not another; a raised cap lets the capped user in again", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentDir(configFor(server, { perUser: { tokens: 19 } }))
      yield* Effect.gen(function*() {
        yield* server.reply(FakeReply.text("One."), FakeReply.text("For u2."))
        expect((yield* turnOf("u1", "first")).outcome.reply).toBe("One.")
        // u1 has used 19 tokens of 19: refused; u2 has used none.
        const refused = yield* turnOf("u1", "second")
        expect(refused.outcome.failure).toMatchObject({ _tag: "BudgetExceeded", cap: "perUser", measure: "tokens", key: "web:u1", limit: 19, spent: 19 })
        expect(failureTextFor({ userId: "u1" }, "", { ...refused.outcome.failure! } as never)).toContain("you have reached your daily limit")
        expect((yield* turnOf("u2", "mine")).outcome.reply).toBe("For u2.")
        const status = yield* Effect.flatMap(SpendGuard, (guard) => guard.today)
        expect(status.users.map((user) => [user.key, user.inputTokens + user.outputTokens])).toEqual([["web:u1", 19], ["web:u2", 19]])
        // u2's answer used their 19 too: both have reached the cap now, each their own.
        expect(status.reached.map((cap) => cap.key)).toEqual(["web:u1", "web:u2"])
        expect(status.channels.map((channel) => channel.key).sort()).toEqual(["web:web:u1", "web:web:u2"])
      }).pipe(Effect.provide(runtimeOver(dir)))
      expect((yield* server.modelRequests).length).toBe(2)

      // The operator raises the cap and restarts: the ledger (kern.db) is kept, and u1 is answered.
      writeFiles(dir, { ".kern/config.json": JSON.stringify(configFor(server, { perUser: { tokens: 100 } })) })
      yield* Effect.gen(function*() {
        yield* server.reply(FakeReply.text("Back."))
        expect((yield* turnOf("u1", "again")).outcome.reply).toBe("Back.")
        const status = yield* Effect.flatMap(SpendGuard, (guard) => guard.today)
        expect(status.users.find((user) => user.key === "web:u1")?.calls).toBe(2)
        expect(status.reached).toEqual([])
      }).pipe(Effect.provide(runtimeOver(dir)))
    }))
})
