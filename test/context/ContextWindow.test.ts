import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import type { SessionHistory } from "../../src/context/SessionHistory.js"
import { AgentConfig } from "../../src/config/AgentConfig.js"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import { coveredEnd } from "../../src/context/Segment.js"
import type { Segment } from "../../src/context/Segment.js"
import { SegmentStore } from "../../src/context/SegmentStore.js"
import * as SegmentStoreSql from "../../src/context/SegmentStoreSql.js"
import * as Summarizer from "../../src/context/Summarizer.js"
import * as Embedder from "../../src/recall/Embedder.js"
import { AssistantMessage, type SessionMessage, ToolResultMessage, UserMessage } from "../../src/session/messages.js"
import * as Database from "../../src/storage/Database.js"
import { loadedAt, makeAgentDir } from "../recall/harness.js"
import { historyOf } from "../support/sessionHistory.js"

const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1_000).toISOString()

/** Filler words: each message is about `words` tokens, on the turn's topic. */
const text = (topic: string, i: number, words: number) => `${topic} ${i}: ${`${topic} detail `.repeat(words / 2)}`

/** A conversation of `turns` turns (user, tool call, tool result, answer): each message ~`words` tokens. */
const conversation = (
  turns: number,
  words = 120,
  topicOf: (turn: number) => string = (turn) => (turn < turns / 2 ? "router" : "garden")
) => {
  const messages: Array<SessionMessage> = []
  for (let t = 0; t < turns; t++) {
    const topic = topicOf(t)
    const i = messages.length
    messages.push(new UserMessage({ text: text(topic, t, words), at: at(i) }))
    messages.push(new AssistantMessage({ text: "", toolCalls: [{ id: `c${t}`, name: "read", params: { path: `${topic}.md` } }], at: at(i + 1) }))
    messages.push(new ToolResultMessage({ toolCallId: `c${t}`, toolName: "read", isError: false, result: text(topic, t, words), at: at(i + 2) }))
    messages.push(new AssistantMessage({ text: text(topic, t, words), at: at(i + 3) }))
  }
  return messages
}

/** A switch the test flips: while on, the summary of the first segment fails (a provider outage for it). */
interface Outage {
  on: boolean
}

const contextLayer = (dir: string, config: Record<string, unknown> = {}, outage: Outage = { on: false }) => {
  const loaded = loadedAt(dir, { maxContextTokens: 20_000, ...config })
  return ContextWindow.Default.pipe(
    Layer.provideMerge(SegmentStoreSql.layer),
    Layer.provide(Summarizer.layerTest({ failWhen: (request) => outage.on && request.level === 0 && request.start === 0 })),
    Layer.provide(Embedder.layerTest({ dimensions: 64 })),
    Layer.provideMerge(Database.layer({ filename: loaded.paths.dbFile })),
    Layer.provideMerge(Layer.succeed(AgentConfig, loaded)),
    Layer.provide(NodeContext.layer)
  )
}


const prepare = (history: SessionHistory, progress: Array<string> = []) =>
  Effect.flatMap(ContextWindow, (context) =>
    context.prepare({
      sessionId: "s1",
      history,
      system: "You are a test agent.",
      toolsTokens: 500,
      modelId: "test-model",
      progress: (line) => Effect.sync(() => progress.push(line))
    }))

/** Every message before the cut is inside one of the injected summaries. */
const covered = (injected: ReadonlyArray<Segment>, cut: number) => {
  let next = 0
  for (const segment of [...injected].sort((a, b) => a.start - b.start)) {
    if (segment.start > next) return false
    next = Math.max(next, segment.end)
  }
  return next >= cut
}

/** The history of `messages` after the background pass of its turn. */
const afterPass = (messages: ReadonlyArray<SessionMessage>) =>
  Effect.gen(function*() {
    const context = yield* ContextWindow
    const history = yield* historyOf(messages)
    yield* context.afterTurn("s1", history)
    yield* context.settled()
    return history
  })

/** 160 turns after a background pass whose summaries failed (the outage on): the summary model is waiting. */
const afterFailedPass = Effect.gen(function*() {
  const context = yield* ContextWindow
  const history = yield* historyOf(conversation(160))
  yield* context.afterTurn("s1", history)
  yield* context.settled()
  return { context, history }
})

describe("ContextWindow", () => {
  it.scoped("preview: the request prepare then sends, message for message and token for token, with nothing moved", () =>
    Effect.gen(function*() {
      const context = yield* ContextWindow
      const history = yield* historyOf(conversation(160))
      yield* context.afterTurn("s1", history)
      yield* context.settled()
      const input = { sessionId: "s1", history, system: "You are a test agent.", toolsTokens: 500, modelId: "test-model" }
      const preview = yield* context.preview(input)
      expect(preview.breakdown.cut).toBeGreaterThan(0)
      // A look only: the cut is not stored, the history still holds every message.
      expect(yield* Effect.flatMap(SegmentStore, (store) => store.getCut("s1"))).toEqual(Option.none())
      expect(yield* history.first).toBe(0)
      const prepared = yield* prepare(history)
      expect(preview.breakdown).toEqual(prepared.breakdown)
      expect(preview.estimate).toBe(prepared.estimate)
      expect(preview.system).toBe(prepared.system)
      expect(preview.conversationSummary).not.toBe("")
      expect(preview.prompt.content).toEqual(prepared.prompt.content)
    }).pipe(Effect.provide(contextLayer(makeAgentDir()))))

  it.scoped("after turns: L0 segments cut at a topic shift, summarized, rolled up by tens; the cut never passes them", () =>
    Effect.gen(function*() {
      const context = yield* ContextWindow
      // 160 turns of ~4×130 tokens: ~83k tokens, far over a 20k window.
      const history = yield* historyOf(conversation(160))
      yield* context.afterTurn("s1", history)
      yield* context.settled()
      const segments = yield* context.segments("s1")
      const l0 = segments.filter((s) => s.level === 0).sort((a, b) => a.start - b.start)
      expect(l0.length).toBeGreaterThanOrEqual(4)
      // Contiguous from 0, every one summarized, each starting with a user message (a turn is never split here).
      l0.forEach((segment, i) => {
        expect(segment.start).toBe(i === 0 ? 0 : l0[i - 1]!.end)
        expect(segment.summary).not.toBeNull()
        expect(segment.start % 4).toBe(0)
      })
      // The topic changes at turn 80 (message 320): a boundary falls there.
      expect(l0.map((s) => s.start)).toContain(320)
      const prepared = yield* prepare(history)
      const { breakdown } = prepared
      expect(breakdown.cut).toBeGreaterThan(0)
      expect(breakdown.cut).toBeLessThanOrEqual(coveredEnd(segments))
      expect(covered(breakdown.injected, breakdown.cut)).toBe(true)
      expect(breakdown.tokens.total).toBeLessThanOrEqual(20_000)
      const system = prepared.prompt.content[0]!
      expect(system.role).toBe("system")
      expect(String(system.content)).toContain("<conversation_summary>")
      // The raw window starts with the user message at the cut.
      const firstRaw = prepared.prompt.content[1]!
      expect(firstRaw.role).toBe("user")
      // Only the window is held now.
      expect(yield* history.first).toBe(breakdown.cut)
      // Persisted: the store has the cut.
      const cut = yield* Effect.flatMap(SegmentStore, (store) => store.getCut("s1"))
      expect(Option.map(cut, (c) => c.messageIndex)).toEqual(Option.some(breakdown.cut))
    }).pipe(Effect.provide(contextLayer(makeAgentDir()))))

  it.scoped("rollup: ten summarized L0 segments make one L1 spanning exactly their messages", () =>
    Effect.gen(function*() {
      const context = yield* ContextWindow
      // ~12 segments' worth (15k tokens each) at ~4×600 tokens a turn.
      const history = yield* historyOf(conversation(80, 1_200, (t) => `topic${Math.floor(t / 7)}`))
      yield* context.afterTurn("s1", history)
      yield* context.settled()
      const segments = yield* context.segments("s1")
      const l0 = segments.filter((s) => s.level === 0).sort((a, b) => a.start - b.start)
      const l1 = segments.filter((s) => s.level === 1)
      expect(l0.length).toBeGreaterThanOrEqual(10)
      expect(l1).toHaveLength(Math.floor(l0.length / 10))
      const children = l0.filter((s) => s.parentId === l1[0]!.id)
      expect(children).toHaveLength(10)
      expect(l1[0]!.start).toBe(children[0]!.start)
      expect(l1[0]!.end).toBe(children[9]!.end)
      expect(l1[0]!.tokens).toBe(children.reduce((sum, s) => sum + s.tokens, 0))
      expect(l1[0]!.summary).toContain("L1 messages")
    }).pipe(Effect.provide(contextLayer(makeAgentDir()))))

  it.scoped("a failing summary model: the window is cut at user messages to fit (said once), no summary is asked for during the backoff, and the summaries catch up after it", () => {
    const outage: Outage = { on: true }
    return Effect.gen(function*() {
      const { context, history } = yield* afterFailedPass
      const before = yield* context.segments("s1")
      const first = before.find((s) => s.level === 0 && s.start === 0)!
      expect(first.summary).toBeNull()
      // Nothing is covered from message 0, and the summary model is waiting out its backoff: the turn does not
      // summarize (nor wait) but cuts the raw window at a user message, within the window, and says so once.
      const progress: Array<string> = []
      const prepared = yield* prepare(history, progress)
      expect(prepared.breakdown.fallback).toBe(true)
      expect(prepared.breakdown.cut).toBeGreaterThan(0)
      expect(prepared.breakdown.cut % 4).toBe(0)
      expect(prepared.breakdown.tokens.total).toBeLessThanOrEqual(20_000)
      expect(progress.some((line) => line.includes("outgrew the context window"))).toBe(false)
      expect(progress.filter((line) => line.includes("cut at user messages"))).toHaveLength(1)
      yield* prepare(history, progress)
      expect(progress.filter((line) => line.includes("cut at user messages"))).toHaveLength(1)
      const status = yield* context.summaryStatus("s1", 640)
      expect(status).toMatchObject({ state: "failing", consecutiveFailures: 1, fallbackCut: true, lagMessages: 640 })
      expect(status.lastError).toContain("told to fail")
      // The model is back, but the backoff holds until its time: still no summary.
      outage.on = false
      yield* context.afterTurn("s1", history)
      yield* context.settled()
      yield* context.catchUpQueued
      expect((yield* context.segments("s1")).find((s) => s.id === first.id)!.summary).toBeNull()
      yield* TestClock.adjust("30 seconds")
      // Far behind: the background catch-up (a long-lived agent's) summarizes it, not the turn's pass.
      yield* context.afterTurn("s1", history)
      yield* context.settled()
      yield* context.catchUpQueued
      const after = yield* context.segments("s1")
      expect(after.find((s) => s.id === first.id)!.summary).not.toBeNull()
      const again = yield* prepare(history)
      expect(again.breakdown.fallback).toBe(false)
      expect(again.breakdown.cut).toBeGreaterThan(0)
      expect(covered(again.breakdown.injected, again.breakdown.cut)).toBe(true)
      expect(yield* context.summaryStatus("s1", 640)).toMatchObject({ state: "ok", consecutiveFailures: 0, fallbackCut: false })
    }).pipe(Effect.provide(contextLayer(makeAgentDir(), {}, outage)))
  })

  it.scoped("`kern segments rebuild` tries a failing summary model at once, whatever its wait", () => {
    const outage: Outage = { on: true }
    return Effect.gen(function*() {
      const { context, history } = yield* afterFailedPass
      expect((yield* context.summaryStatus("s1", 640)).state).toBe("failing")
      outage.on = false
      const rebuilt = yield* context.rebuild("s1", history, () => Effect.void)
      expect(rebuilt.filter((s) => s.level === 0).every((s) => s.summary !== null)).toBe(true)
      expect((yield* context.summaryStatus("s1", 640)).state).toBe("ok")
    }).pipe(Effect.provide(contextLayer(makeAgentDir(), {}, outage)))
  })

  it.scoped("a history far over maxContextTokens with no segments yet is answered at once, cut at user messages; the catch-up summarizes it after", () =>
    Effect.gen(function*() {
      const context = yield* ContextWindow
      const history = yield* historyOf(conversation(160))
      const progress: Array<string> = []
      const prepared = yield* prepare(history, progress)
      // No summary before the answer: the window is cut at a user message, within the window.
      expect(yield* context.segments("s1")).toEqual([])
      expect(progress.some((line) => line.includes("summarizing older messages first"))).toBe(false)
      expect(progress[0]).toContain("cut at user messages")
      expect(prepared.breakdown.fallback).toBe(true)
      expect(prepared.breakdown.cut % 4).toBe(0)
      expect(prepared.breakdown.tokens.total).toBeLessThanOrEqual(20_000)
      // After the turn, the session waits for the catch-up, never for the turn's own pass.
      yield* context.afterTurn("s1", history)
      yield* context.settled()
      expect(yield* context.segments("s1")).toEqual([])
      yield* context.catchUpQueued
      const next = yield* prepare(history, progress)
      expect(next.breakdown.fallback).toBe(false)
      expect(next.breakdown.tokens.total).toBeLessThanOrEqual(20_000)
      expect(covered(next.breakdown.injected, next.breakdown.cut)).toBe(true)
    }).pipe(Effect.provide(contextLayer(makeAgentDir()))))

  it.scoped("the hard limit: a turn that outgrew the window by less than a window's worth is summarized in the turn, never dropped", () =>
    Effect.gen(function*() {
      const context = yield* ContextWindow
      const messages = conversation(160)
      const history = yield* afterPass(messages.slice(0, 400))
      const before = yield* context.segments("s1")
      // Turns since the last pass that outgrew the window: the summaries behind by less than a window's worth.
      for (const message of messages.slice(400, 580)) yield* history.append(message)
      const progress: Array<string> = []
      const prepared = yield* prepare(history, progress)
      expect(progress[0]).toContain("summarizing older messages first")
      expect((yield* context.segments("s1")).length).toBeGreaterThan(before.length)
      expect(prepared.breakdown.fallback).toBe(false)
      expect(prepared.breakdown.tokens.total).toBeLessThanOrEqual(20_000)
      expect(covered(prepared.breakdown.injected, prepared.breakdown.cut)).toBe(true)
    }).pipe(Effect.provide(contextLayer(makeAgentDir()))))

  it.scoped("the cut holds while the window fits (hysteresis) and moves only when it overflows", () =>
    Effect.gen(function*() {
      const context = yield* ContextWindow
      const messages = conversation(160)
      const history = yield* afterPass(messages.slice(0, 400))
      const first = (yield* prepare(history)).breakdown
      expect(first.cut).toBeGreaterThan(0)
      // One more short turn: still within the raw budget, so the cut (and the cached prefix) stays.
      yield* history.append(new UserMessage({ text: "and the DNS?", at: at(1_000) }))
      yield* history.append(new AssistantMessage({ text: "still the pi.", at: at(1_001) }))
      const second = (yield* prepare(history)).breakdown
      expect(second.cut).toBe(first.cut)
      expect(second.tokens.raw).toBeLessThanOrEqual(second.budget.raw)
    }).pipe(Effect.provide(contextLayer(makeAgentDir()))))

  it.scoped("summaryBudget 0: no summaries; the window is trimmed at user messages and stays within budget", () =>
    Effect.gen(function*() {
      const context = yield* ContextWindow
      const history = yield* historyOf(conversation(160))
      const prepared = yield* prepare(history)
      expect(prepared.breakdown.cut).toBeGreaterThan(0)
      expect(prepared.breakdown.cut % 4).toBe(0)
      expect(prepared.breakdown.injected).toHaveLength(0)
      expect(String(prepared.prompt.content[0]!.content)).not.toContain("<conversation_summary>")
      expect(prepared.breakdown.tokens.total).toBeLessThanOrEqual(20_000)
      yield* context.afterTurn("s1", history)
      yield* context.settled()
      expect(yield* context.segments("s1")).toHaveLength(0)
    }).pipe(Effect.provide(contextLayer(makeAgentDir(), { summaryBudget: 0 }))))

  it.scoped("calibration: a model that counts more than we do gets a smaller window, learnt and kept in kern.db", () =>
    Effect.gen(function*() {
      const context = yield* ContextWindow
      const history = yield* historyOf(conversation(30))
      const before = (yield* prepare(history)).breakdown
      expect(before.calibration).toBe(1)
      for (let i = 0; i < 10; i++) yield* context.calibrate("test-model", 10_000, 15_000)
      const after = (yield* prepare(history)).breakdown
      expect(after.calibration).toBeGreaterThan(1.4)
      expect(after.budget.conversation).toBeLessThan(before.budget.conversation)
      const stored = yield* Effect.flatMap(SegmentStore, (store) => store.getCalibration("test-model"))
      expect(Option.getOrThrow(stored)).toBeCloseTo(after.calibration, 5)
      // A report nowhere near our count (a proxy's fixed or zero usage) is not learnt from.
      for (let i = 0; i < 10; i++) yield* context.calibrate("test-model", 10_000, 12)
      expect((yield* prepare(history)).breakdown.calibration).toBeCloseTo(after.calibration, 5)
      // A model that counts fewer tokens than o200k does not get a window much larger than its own.
      for (let i = 0; i < 30; i++) yield* context.calibrate("other-model", 10_000, 6_000)
      expect(Option.getOrThrow(yield* Effect.flatMap(SegmentStore, (store) => store.getCalibration("other-model")))).toBe(0.9)
    }).pipe(Effect.provide(contextLayer(makeAgentDir()))))
})
