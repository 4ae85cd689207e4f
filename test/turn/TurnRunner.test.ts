import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { heartbeatInterface, MessageQueue } from "../../src/turn/MessageQueue.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { EventLog } from "../../src/kernel/EventLog.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const agentDir = (config: Record<string, unknown>) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, { ".kern/config.json": JSON.stringify(config), "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n" })
  return dir
}

/** Runs `body` with the whole agent runtime over a temp folder whose model is the fake server. */
const withAgent = <A, E>(
  config: (server: FakeModelServerShape) => Record<string, unknown>,
  body: (server: FakeModelServerShape, dir: string) => Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof agentRuntimeLayer>>>
) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* makeFakeServer
    const dir = agentDir({ model: "test-model", ...config(server) })
    const runtime = agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test", OPENAI_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    )
    return yield* body(server, dir).pipe(Effect.provide(runtime))
  }))

/** Offers the messages, runs one turn for the first, collects its events. */
const turn = (...texts: Array<string>) => turnOn("web", ...texts)

/** As turn, with the messages arriving over `interface` (e.g. the heartbeat's). */
const turnOn = (over: string, ...texts: Array<string>) =>
  Effect.scoped(Effect.gen(function*() {
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const { session } = yield* openActiveSession()
    for (const text of texts) yield* queue.offer({ interface: over, channel: `${over}:1`, userId: "u1", text })
    const message = yield* queue.next
    const events = yield* Ref.make<ReadonlyArray<TurnEvent>>([])
    const outcome = yield* runner.run({ message, session, emit: (event) => Ref.update(events, (all) => [...all, event]) })
    yield* queue.endTurn("main")
    return { outcome, events: yield* Ref.get(events), messages: yield* session.history.messages }
  }))

describe("TurnRunner", () => {
  it.live("Responses API: two tool calls, results sent back, then the answer; events in order", () =>
    withAgent((server) => ({ provider: "openai", baseURL: server.baseURL }), (server, dir) =>
      Effect.gen(function*() {
        yield* server.reply(
          FakeReply.toolCalls([
            { id: "call_1", name: "write", args: { path: "notes/a.md", content: "alpha\n" } },
            { id: "call_2", name: "glob", args: { pattern: "*.md" } }
          ]),
          FakeReply.text("Wrote notes/a.md.")
        )
        const { events, messages, outcome } = yield* turn("write a")
        expect(outcome).toMatchObject({ reply: "Wrote notes/a.md.", delivered: true, steps: 2 })
        expect(NodeFs.readFileSync(NodePath.join(dir, "notes/a.md"), "utf8")).toBe("alpha\n")
        // The message comes in first; a thinking event opens each model step.
        expect(events[0]).toMatchObject({ type: "incoming", text: "write a", interface: "web", channel: "web:1", userId: "u1" })
        expect(events.flatMap((e) => e.type === "thinking" ? [e.step] : [])).toEqual([1, 2])
        // Every event names the turn and its conversation.
        const turnId = events[0]?.turnId
        for (const event of events) expect(event).toMatchObject({ turnId, conversationId: "web:web:1" })
        const types = events.map((e) => e.type).filter((type) => type !== "thinking" && type !== "incoming")
        expect(types.slice(0, 2)).toEqual(["tool-call", "tool-call"])
        expect(types.filter((t) => t === "tool-result")).toHaveLength(2)
        expect(types.indexOf("text-delta")).toBeGreaterThan(types.lastIndexOf("tool-result"))
        // The reply's last characters (a possible NO_REPLY) are held until the turn knows its reply.
        expect(types.slice(-2)).toEqual(["text-delta", "finish"])
        expect(events.at(-1)).toMatchObject({ reply: "Wrote notes/a.md.", steps: 2, delivered: true, usage: { inputTokens: expect.any(Number) } })
        expect(messages.map((m) => m._tag)).toEqual(["user", "assistant", "tool", "tool", "assistant"])
        const requests = yield* server.requests
        expect(requests.map((r) => r.path)).toEqual(["/responses", "/responses"])
        const input = JSON.stringify((requests[1]!.body as { input: unknown }).input)
        expect(input).toContain("function_call_output")
        expect(input).toContain("call_1")
        const instructions = JSON.stringify(requests[0]!.body)
        expect(instructions).toContain("I am the test agent.")
      })))

  it.live("heartbeatModel: heartbeat turns run on it, every other turn on the agent's model", () =>
    withAgent((server) => ({ baseURL: server.baseURL, heartbeatModel: "cheap-model" }), (server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.text("NO_REPLY"), FakeReply.text("Hello."))
        yield* turnOn(heartbeatInterface, "[heartbeat]")
        yield* turn("hi")
        const models = (yield* server.requests).map((r) => (r.body as { model: string }).model)
        expect(models).toEqual(["cheap-model", "test-model"])
      })))

  it.live("the budget stops the turn with a clear message, recorded in the EventLog", () =>
    withAgent((server) => ({ baseURL: server.baseURL, budget: { maxToolCalls: 1 } }), (server) =>
      Effect.gen(function*() {
        yield* server.reply(
          FakeReply.toolCalls([
            { id: "c1", name: "glob", args: { pattern: "*" } },
            { id: "c2", name: "glob", args: { pattern: "*.md" } }
          ]),
          FakeReply.text("never asked")
        )
        const { events, messages, outcome } = yield* turn("look around")
        expect(outcome.failure?.message).toContain("budget is used up")
        expect(outcome.failure).toMatchObject({ _tag: "BudgetExhausted", cap: "maxToolCalls", limit: 1, toolCallsUsed: 1 })
        expect(events.some((e) => e.type === "error" && e.message.includes("budget"))).toBe(true)
        const results = messages.filter((m) => m._tag === "tool")
        expect(results.filter((m) => m._tag === "tool" && m.isError && String(m.result).startsWith("BUDGET_EXCEEDED"))).toHaveLength(1)
        expect((yield* server.requests).length).toBe(1)
        const log = yield* EventLog
        const recent = yield* log.recent(20)
        expect(recent.map((e) => e.decisionKey)).toContain("kernel.budget.exceeded")
      })))

  it.live("NO_REPLY is not delivered; a same-channel message waiting in the queue is injected at the next step", () =>
    withAgent((server) => ({ baseURL: server.baseURL }), (server) =>
      Effect.gen(function*() {
        yield* server.reply(
          FakeReply.toolCalls([{ id: "c1", name: "glob", args: { pattern: "*.md" } }]),
          FakeReply.text("Saved.\nNO_REPLY")
        )
        const { events, messages, outcome } = yield* turn("first", "second, sent while you were busy")
        expect(outcome.delivered).toBe(false)
        expect(events.find((e) => e.type === "finish")).toMatchObject({ delivered: false })
        // The injected message comes in to the running turn, under the id it was queued with.
        const injectedEvent = events.find((e) => e.type === "incoming" && e.text.startsWith("second"))
        expect(injectedEvent).toMatchObject({ turnId: events[0]?.turnId, conversationId: "web:web:1" })
        expect(injectedEvent?.type === "incoming" ? injectedEvent.messageId : undefined).not.toBe(events[0]?.turnId)
        expect(messages.map((m) => m._tag)).toEqual(["user", "assistant", "tool", "user", "assistant"])
        // The injected message belongs to the running turn: a restart reads the turn as one (leftoverReplies.ts).
        const [first, , , injected] = messages
        expect(first?._tag === "user" ? first.envelope?.turn : undefined).toBeDefined()
        expect(injected?._tag === "user" ? injected.envelope?.turn : undefined).toBe(first?._tag === "user" ? first.envelope?.turn : "")
        const second = JSON.stringify((yield* server.requests)[1]!.body)
        expect(second).toContain("second, sent while you were busy")
      })))

  it.live("NO_REPLY is taken out at the source: no text delta, no prefix of the marker, and finish's reply without it", () =>
    withAgent((server) => ({ baseURL: server.baseURL }), (server) =>
      Effect.gen(function*() {
        yield* server.reply(
          FakeReply.toolCalls([{ id: "c1", name: "glob", args: { pattern: "*.md" } }], { text: "Looking. NO_REPLY" }),
          FakeReply.text("Saved the note.\nNO_REPLY"),
          FakeReply.text("NO_REPLY"),
          FakeReply.text("I will answer NO_REPLY later, here it is.")
        )
        const shown = (events: ReadonlyArray<TurnEvent>) => events.flatMap((e) => e.type === "text-delta" ? [e.delta] : []).join("")
        const first = yield* turn("save it")
        const text = shown(first.events)
        expect(text).toBe("Looking. Saved the note.")
        for (const event of first.events) expect(JSON.stringify(event)).not.toMatch(/NO_RE/)
        expect(first.events.find((e) => e.type === "finish")).toMatchObject({ reply: "Saved the note.", delivered: false })
        // The text before the tool call went out before the call, not after it.
        const types = first.events.map((e) => e.type)
        expect(types.indexOf("text-delta")).toBeLessThan(types.indexOf("tool-call"))
        // Text the filter held back goes out named with its turn.
        for (const event of first.events) expect(event).toMatchObject({ turnId: first.events[0]?.turnId })
        const bare = yield* turn("nothing to say")
        expect(bare.events.filter((e) => e.type === "text-delta")).toEqual([])
        expect(bare.events.find((e) => e.type === "finish")).toMatchObject({ reply: "", delivered: false })
        // The marker in the middle of a reply is text like any other.
        const middle = yield* turn("later")
        expect(shown(middle.events)).toBe("I will answer NO_REPLY later, here it is.")
        // The session keeps what the model said, marker and all.
        expect(first.messages.at(-1)).toMatchObject({ _tag: "assistant", text: "Saved the note.\nNO_REPLY" })
      })))

  it.live("an Anthropic model through OpenRouter: cache_control on the system prompt and the last user message; others unmarked", () =>
    Effect.gen(function*() {
      const marked = (body: unknown) =>
        ((body as { messages: ReadonlyArray<{ role: string; content: unknown }> }).messages).flatMap((message, i) =>
          Array.isArray(message.content) && message.content.some((part: { cache_control?: unknown }) => part.cache_control !== undefined)
            ? [`${i}:${message.role}`]
            : []
        )
      const anthropic = yield* withAgent((server) => ({ baseURL: server.baseURL, model: "anthropic/claude-sonnet-4.5" }), (server) =>
        Effect.gen(function*() {
          yield* server.reply(FakeReply.text("one"), FakeReply.text("two"))
          yield* turn("first")
          yield* turn("second")
          return (yield* server.requests).map((r) => r.body)
        }))
      expect(marked(anthropic[0])).toEqual(["0:system", "1:user"])
      // The second turn: system, the first turn's user message and answer, then the new user message (marked).
      expect(marked(anthropic[1])).toEqual(["0:system", "3:user"])
      const other = yield* withAgent((server) => ({ baseURL: server.baseURL, model: "openai/gpt-4.1" }), (server) =>
        Effect.gen(function*() {
          yield* server.reply(FakeReply.text("one"))
          yield* turn("first")
          return (yield* server.requests).map((r) => r.body)
        }))
      expect(marked(other[0])).toEqual([])
    }))

  it.live("the last step offers no tools, so the turn always ends with text", () =>
    withAgent((server) => ({ baseURL: server.baseURL, maxSteps: 2 }), (server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.toolCalls([{ id: "c1", name: "glob", args: { pattern: "*" } }]), FakeReply.text("Done."))
        const { outcome } = yield* turn("go")
        expect(outcome.reply).toBe("Done.")
        const requests = yield* server.requests
        expect((requests[0]!.body as { tools?: unknown }).tools).toBeDefined()
        expect((requests[1]!.body as { tools?: unknown }).tools).toBeUndefined()
      })))

  it.live("unknown tools and malformed arguments from the model become results the model can read", () =>
    withAgent((server) => ({ baseURL: server.baseURL }), (server) =>
      Effect.gen(function*() {
        yield* server.reply(
          FakeReply.toolCalls([
            { id: "c1", name: "delete_everything", args: {} },
            { id: "c2", name: "read", args: { path: 42 } }
          ]),
          FakeReply.text("I will use the right tools.")
        )
        const { messages, outcome } = yield* turn("go")
        expect(outcome.failure).toBeUndefined()
        const results = messages.filter((m) => m._tag === "tool").map((m) => (m._tag === "tool" ? String(m.result) : ""))
        expect(results.find((r) => r.startsWith("NOT_FOUND"))).toContain("read")
        expect(results.find((r) => r.startsWith("VALIDATION_ERROR"))).toContain("path")
      })))
})

describe("TurnRunner, prices and the watchdog", () => {
  it.live("the turn's cost uses the config's price table over the built-in one", () =>
    withAgent((server) => ({ baseURL: server.baseURL, prices: { "test-model": { input: 100, output: 200 } } }), (server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.text("ok", { usage: { input: 12, output: 7, cached: 0 } }))
        const { events } = yield* turn("price check")
        const finish = events.find((e) => e.type === "finish")
        // (12 × $100 + 7 × $200) per million tokens = $0.0026 = 0.26¢
        expect(finish?.type === "finish" ? finish.usage.costUsdCents : -1).toBeCloseTo(0.26, 6)
      })))

  it.scoped("a model stream that sends nothing for 5 minutes is stopped by the watchdog, on the Clock", () =>
    withAgent((server) => ({ baseURL: server.baseURL }), (server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.text("too late", { delay: "10 minutes" }))
        const fiber = yield* Effect.fork(turn("hello?"))
        yield* server.awaitRequests(1)
        yield* TestClock.adjust("5 minutes")
        const { outcome } = yield* Fiber.join(fiber)
        expect(outcome.failure?._tag).toBe("WatchdogFired")
        expect(outcome.failure?.message).toContain("sent nothing for 5 minutes")
      })))
})
