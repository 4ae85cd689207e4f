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
