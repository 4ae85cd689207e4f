import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AgentConfig } from "../../src/config/AgentConfig.js"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import * as SegmentStoreSql from "../../src/context/SegmentStoreSql.js"
import { messageOverheadTokens, sentText } from "../../src/context/sentText.js"
import * as Summarizer from "../../src/context/Summarizer.js"
import { SummaryGate } from "../../src/context/SummaryGate.js"
import { type TokenCounter, Tokenizer } from "../../src/model/tokenizer.js"
import * as Embedder from "../../src/recall/Embedder.js"
import { AssistantMessage, type SessionMessage, ToolResultMessage, UserMessage } from "../../src/session/messages.js"
import * as Database from "../../src/storage/Database.js"
import { loadedAt, makeAgentDir } from "../recall/harness.js"
import { historyOf } from "../support/sessionHistory.js"

const at = "2026-11-22T10:00:00.000Z"

/** A conversation of `turns` turns (question, tool call, long tool result, answer). */
const conversation = (turns: number): ReadonlyArray<SessionMessage> =>
  Array.from({ length: turns }, (_, t) => [
    new UserMessage({ text: `question ${t}: did the backup of the NAS run?`, at }),
    new AssistantMessage({ text: "", toolCalls: [{ id: `c${t}`, name: "read", params: { path: "backup.log" } }], at }),
    new ToolResultMessage({ toolCallId: `c${t}`, toolName: "read", isError: false, result: `run ${t} ok\n`.repeat(200 + t), at }),
    new AssistantMessage({ text: `answer ${t}: yes, it ran at 03:00.`, at })
  ]).flat()

/** Counts words (a stand-in encoder): records when the encoder is loaded and how many texts it counts. */
const probe = () => {
  const seen = { loads: 0, counted: 0 }
  const count: TokenCounter = (text) => {
    seen.counted++
    return text.split(/\s+/).filter((word) => word !== "").length
  }
  const layer = Layer.succeed(Tokenizer, Tokenizer.make({ counter: Effect.sync(() => (seen.loads++, count)) }))
  return { seen, count, layer }
}

const maxToolResultChars = 2_000

const contextLayer = (dir: string, tokenizer: Layer.Layer<Tokenizer>) =>
  ContextWindow.DefaultWithoutDependencies.pipe(
    Layer.provide(SummaryGate.Default),
    Layer.provide(Layer.mergeAll(SegmentStoreSql.layer, Summarizer.layerTest(), Embedder.layerNone("test"), tokenizer)),
    Layer.provideMerge(Database.layer({ filename: loadedAt(dir).paths.dbFile })),
    Layer.provideMerge(Layer.succeed(AgentConfig, loadedAt(dir, { maxToolResultChars }))),
    Layer.provide(NodeContext.layer)
  )


/** Each message's tokens as the context counts them, counted one by one. */
const eager = (messages: ReadonlyArray<SessionMessage>, count: TokenCounter, firstIndex = 0) =>
  messages.map((message, i) => count(sentText(message, maxToolResultChars, "s1", firstIndex + i)) + messageOverheadTokens)

describe("opening a session counts no tokens", () => {
  it.scoped("the encoder is neither loaded nor used to open a session; the window counts every message as before", () => {
    const { seen, count, layer } = probe()
    const messages = conversation(500)
    return Effect.gen(function*() {
      const history = yield* historyOf(messages)
      expect(seen).toEqual({ loads: 0, counted: 0 })
      expect(yield* history.size).toBe(2_000)

      const window = yield* history.window
      expect(seen.loads).toBe(1)
      expect(window.tokens).toEqual(eager(messages, count))
      // Counted once: asking again counts nothing more.
      const counted = seen.counted
      yield* history.window
      expect(seen.counted).toBe(counted)
    }).pipe(Effect.provide(contextLayer(makeAgentDir(), layer)))
  })

  it.scoped("messages appended or let go before the first window leave every count where it belongs", () => {
    const { count, layer } = probe()
    const messages = conversation(50)
    const more = conversation(52).slice(200)
    return Effect.gen(function*() {
      // Read from a cut at message 40: absolute indices (which a cut tool result's note names) start there.
      const history = yield* historyOf(messages.slice(40), 40)
      for (const message of more) yield* history.append(message)
      yield* history.dropBefore(60)
      const window = yield* history.window
      expect(window.base).toBe(60)
      expect(window.tokens).toEqual(eager([...messages.slice(60), ...more], count, 60))
    }).pipe(Effect.provide(contextLayer(makeAgentDir(), layer)))
  })
})

describe("a plan counts from the stored cut on", () => {
  /** The request of a turn on `messages`, as a process that opens the session anew (its own ContextWindow) sends it. */
  const turnIn = (dir: string, messages: ReadonlyArray<SessionMessage>, countAllFirst: boolean) => {
    const { seen, layer } = probe()
    return Effect.gen(function*() {
      const context = yield* ContextWindow
      const history = yield* historyOf(messages)
      // The slow path: every message counted before the plan, as every window was before.
      if (countAllFirst) yield* history.window
      const prepared = yield* context.prepare({
        sessionId: "s1",
        history,
        system: "You are a test agent.",
        toolsTokens: 500,
        modelId: "test-model",
        progress: () => Effect.void
      })
      yield* context.afterTurn("s1", history)
      yield* context.settled()
      return { prepared, counted: seen.counted, size: yield* history.size }
    }).pipe(Effect.scoped, Effect.provide(contextLayer(dir, layer)))
  }

  it.live("a session whose summaries are far behind: the next process counts its raw window, not the whole session, and sends the same request", () =>
    Effect.gen(function*() {
      const messages = conversation(500)
      const next = [...messages, new UserMessage({ text: "and the NAS?", at })]
      const lazy = makeAgentDir()
      const eagerDir = makeAgentDir()
      // The first turn on the long session: cut at user messages (no summaries), the cut stored in kern.db.
      const first = yield* turnIn(lazy, messages, false)
      expect(first.prepared.breakdown.fallback).toBe(true)
      expect((yield* turnIn(eagerDir, messages, true)).prepared).toEqual(first.prepared)
      // The next process: the same request whether every message is counted first or only the window.
      const fast = yield* turnIn(lazy, next, false)
      const slow = yield* turnIn(eagerDir, next, true)
      expect(fast.prepared).toEqual(slow.prepared)
      expect(fast.prepared.breakdown.fallback).toBe(true)
      expect(slow.counted).toBeGreaterThanOrEqual(next.length)
      // The raw window and the newest messages that show the backlog is over a window, not the 2,001 messages.
      expect(fast.counted).toBeLessThan(next.length / 2)
    }))

  it.scoped("windowFrom counts the messages from where it is asked on; the full window then counts the rest, the same counts", () => {
    const { count, layer, seen } = probe()
    const messages = conversation(100)
    const expected = eager(messages.slice(40), count, 40)
    return Effect.gen(function*() {
      const before = seen.counted
      const history = yield* historyOf(messages.slice(40), 40)
      const from = yield* history.windowFrom(300)
      expect(seen.counted - before).toBe(100)
      expect(from.tokens.slice(300 - 40)).toEqual(expected.slice(300 - 40))
      // Past the held messages: every one counted, as a plan then starts over from the first held.
      const all = yield* history.windowFrom(10_000)
      expect(seen.counted - before).toBe(360)
      expect(all.tokens).toEqual(expected)
      yield* history.window
      expect(seen.counted - before).toBe(360)
    }).pipe(Effect.provide(contextLayer(makeAgentDir(), layer)))
  })

  it.scoped("exceeds answers as the whole sum does, at every limit, counting from the newest back only as far as it needs", () => {
    const { count, layer, seen } = probe()
    const messages = conversation(30)
    const counts = eager(messages, count)
    return Effect.gen(function*() {
      for (const from of [0, 7, 64, 119, 120, 500]) {
        const total = counts.slice(from).reduce((sum, n) => sum + n, 0)
        for (const limit of [0, 1, counts.at(-1)! - 1, counts.at(-1)!, Math.floor(total / 2), total - 1, total, total + 1, 10 * total]) {
          const history = yield* historyOf(messages)
          const before = seen.counted
          expect(yield* history.exceeds(from, limit)).toBe(total > limit)
          const counted = seen.counted - before
          if (total > limit) expect(counted).toBeLessThanOrEqual(messages.length - Math.min(from, messages.length))
          // Whatever it counted is what the full window counts.
          expect((yield* history.window).tokens).toEqual(counts)
        }
      }
      // Once counted, asking again counts nothing.
      const history = yield* historyOf(messages)
      yield* history.exceeds(0, 1)
      const counted = seen.counted
      expect(yield* history.exceeds(60, 1)).toBe(true)
      expect(seen.counted - counted).toBeLessThanOrEqual(120)
    }).pipe(Effect.provide(contextLayer(makeAgentDir(), layer)))
  })
})
