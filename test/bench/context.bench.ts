import { Effect, Layer } from "effect"
import { performance } from "node:perf_hooks"
import { openActiveSession } from "../../src/agent/activeSession.js"
import { buildSystemPromptFrom } from "../../src/agent/systemPrompt.js"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import { makeFileCache } from "../../src/memory/fileCache.js"
import * as NotesSummary from "../../src/memory/NotesSummary.js"
import { AssistantMessage, UserMessage } from "../../src/session/messages.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import type { Bench } from "./bench.js"
import { benchAgent, storeLayer } from "./fixtures.js"

const at = "2026-11-23T10:00:00.000Z"

/** What the tool definitions of a full-scope run cost, about (the bench has no registry). */
const toolsTokens = 2_400

/**
 * Preparing the model input for the next turn of a session of `messages` messages whose segment tree is built (as
 * the running agent keeps it): the system prompt from the memory files (cached by mtime), the trim, the summaries
 * composed and rendered, the prompt over the raw window. One user message and one answer are appended before each
 * preparation, as a turn does. After `warmup` preparations; the peak RSS of the process is the second figure.
 */
const prepare = (messages: number, runs: number, warmup: number) => async () => {
  const agent = benchAgent(messages, { model: "bench-model", maxContextTokens: 100_000 })
  try {
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* ContextWindow
      const store = yield* SessionStore
      // The tree, made once from the whole session, as `kern segments rebuild` makes it.
      const id = (yield* openActiveSession()).session.id
      const whole = yield* store.load(id)
      yield* context.rebuild(id, yield* context.historyOf(whole), () => Effect.void)
      // The agent as it starts: the session read from its cut.
      const { session } = yield* openActiveSession()
      const files = yield* makeFileCache
      const system = buildSystemPromptFrom(files, { tools: [] }).pipe(Effect.provide(NotesSummary.layerNone))
      const samples: Array<number> = []
      const rss: Array<number> = []
      for (let i = 0; i < warmup + runs; i++) {
        yield* session.history.append(new UserMessage({ text: `question ${i}: and the backups?`, at }))
        yield* session.history.append(new AssistantMessage({ text: `answer ${i}: they ran at 03:00.`, at }))
        const start = performance.now()
        const prepared = yield* context.prepare({
          sessionId: session.id,
          history: session.history,
          system: yield* system,
          toolsTokens,
          modelId: "bench-model",
          progress: () => Effect.void
        })
        const ms = performance.now() - start
        if (prepared.breakdown.tokens.total > 100_000 || prepared.breakdown.injected.length === 0) {
          return yield* Effect.die(`the context is not trimmed: ${JSON.stringify(prepared.breakdown.tokens)}`)
        }
        if (i >= warmup) {
          samples.push(ms)
          rss.push(process.memoryUsage().rss / 2 ** 20)
        }
      }
      return { samples, rss }
    })).pipe(Effect.provide(Layer.fresh(storeLayer(agent.dir)))))
  } finally {
    agent.remove()
  }
}

/** Peak RSS after preparing: the whole process, in MiB (what the window holds, not the session). */
const peak = (messages: number) => async () => {
  const { rss } = await prepare(messages, 20, 10)()
  return { samples: [Math.max(...rss)] }
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "context.prepare.75k",
    unit: "ms",
    run: async () => {
      const big = await prepare(75_000, 50, 20)()
      // The same on a short session with its tree: flat means the cost does not grow with the session.
      const small = await prepare(2_000, 50, 20)()
      return { samples: big.samples, baseline: small.samples }
    }
  },
  { name: "context.prepare.75k.rss", unit: "MiB peak RSS", run: peak(75_000) }
]
