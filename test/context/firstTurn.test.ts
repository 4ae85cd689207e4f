import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, PubSub, Queue, Scope } from "effect"
import { runningAgentLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { coveredEnd } from "../../src/context/Segment.js"
import { SegmentStore } from "../../src/context/SegmentStore.js"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { FakeReply, makeWith, type RecordedRequest } from "../support/fakeModelServer.js"
import { operatorTurn, testRuntime } from "../support/operatorTurn.js"
import { summaryModelAgent } from "./summaryAgent.js"
import { eventuallyEffect } from "../support/waitFor.js"

const sessionId = "20261122-100000-000-beef"
/** About 330k tokens: over 16 windows of 20k, ~20 L0 segments and their rollups to summarize. */
const messages = 4_000

/** Requests by kind: the summary model's (its own model name) and the agent's turns. */
const modelOf = (request: RecordedRequest) => (request.body as { readonly model?: string }).model
const isSummary = (request: RecordedRequest) => request.path === "/responses" && modelOf(request) === "summary-model"
const isTurn = (text: string) => (request: RecordedRequest) =>
  request.path === "/responses" && modelOf(request) === "test-model" && JSON.stringify(request.body).includes(text)

const systemOf = (request: RecordedRequest) =>
  JSON.stringify((request.body as { readonly input: ReadonlyArray<{ readonly content?: unknown }> }).input[0]?.content)

/** The agent of summaryModelAgent with a session of `messages`: over the window many times. */
const agentDir = (baseURL: string) => summaryModelAgent(baseURL, {}, {}, sessionId, messages)

const server = makeWith({
  fallback: (body) =>
    FakeReply.text(body.model === "summary-model" ? "The operator and the agent went over the router and the pi's DNS." : "Still the pi.")
})

/** The running agent (kern run / start / tui) on `dir`, built in `scope`. */
const runningAgent = (dir: string, scope: Scope.Scope) =>
  runningAgentLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, { OPENAI_API_KEY: "sk-test" })),
    Layer.provide(NodeContext.layer),
    Layer.buildWithScope(scope)
  )

/** One operator turn through the running agent, to its finish. */
const turn = (runtime: Context.Tag.Service<typeof AgentRuntime>, text: string) =>
  Effect.scoped(Effect.gen(function*() {
    const events = yield* PubSub.subscribe(runtime.events)
    yield* runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text })
    for (;;) if ((yield* Queue.take(events)).type === "finish") return
  }))

/** Whether every message before the stored raw window is covered by a summarized L0 prefix (the catch-up is done). */
const caughtUp = (store: Context.Tag.Service<typeof SegmentStore>) =>
  Effect.gen(function*() {
    const segments = yield* store.list(sessionId)
    const l0 = segments.filter((segment) => segment.level === 0)
    return l0.length > 0 && l0.every((segment) => segment.summary !== null) && coveredEnd(segments) >= messages - 10
  })

describe("the first turn on a long session with no stored cut", () => {
  it.scopedLive("answers with no summary call before it; the running agent summarizes in the background; the next turn uses the summaries", () =>
    Effect.gen(function*() {
      const model = yield* server
      const dir = agentDir(model.baseURL)
      const context = yield* runningAgent(dir, yield* Effect.scope)
      const runtime = Context.get(context, AgentRuntime)
      const store = Context.get(context, SegmentStore)

      yield* turn(runtime, "what did we decide about DNS?")
      const requests = yield* model.requests
      const first = requests.findIndex(isTurn("what did we decide about DNS?"))
      expect(first).toBeGreaterThanOrEqual(0)
      expect(requests.slice(0, first).filter(isSummary)).toHaveLength(0)
      // Answered from a window cut at user messages: no summary in it.
      expect(systemOf(requests[first]!)).not.toContain("<conversation_summary>")

      // The summaries come afterwards, in the background.
      expect(yield* eventuallyEffect(caughtUp(store))).toBe(true)
      expect((yield* model.requests).filter(isSummary).length).toBeGreaterThan(10)

      yield* turn(runtime, "and the DHCP range?")
      const second = (yield* model.requests).find(isTurn("and the DHCP range?"))!
      expect(systemOf(second)).toContain("<conversation_summary>")
    }), { timeout: 120_000 })

  it.scopedLive("a one-shot turn leaves the summaries to the next long-lived agent, which continues them at its start", () =>
    Effect.gen(function*() {
      const model = yield* server
      const dir = agentDir(model.baseURL)
      const once = yield* operatorTurn("what did we decide about DNS?", { oneShot: true }).pipe(Effect.provide(testRuntime(dir)))
      expect(once.outcome.failure).toBeUndefined()
      // The one-shot process answered and exited without a summary call, before or after its answer.
      expect((yield* model.requests).filter(isSummary)).toHaveLength(0)

      const context = yield* runningAgent(dir, yield* Effect.scope)
      const store = Context.get(context, SegmentStore)
      // No turn yet: the running agent took up the backlog at its start.
      expect(yield* eventuallyEffect(caughtUp(store))).toBe(true)
    }), { timeout: 120_000 })
})
