import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { buildSystemPromptFrom } from "../../src/context/systemPrompt.js"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import { makeFileCache } from "../../src/memory/fileCache.js"
import * as NotesSummary from "../../src/memory/NotesSummary.js"
import { AssistantMessage, UserMessage } from "../../src/session/messages.js"
import type { Bench } from "./bench.js"
import { benchKernBin } from "./kernBuild.js"
import { benchAgent, startModelServerProcess, storeLayer } from "./fixtures.js"


const at = "2026-11-23T10:00:00.000Z"

/** What the tool definitions of a full-scope run cost, about (the bench has no registry). */
const toolsTokens = 2_400

/**
 * Preparing the model input for the next turn of a session of `messages` messages whose segment tree is built (as
 * the running agent keeps it): the system prompt from the memory files (cached by mtime), the trim, the summaries
 * composed and rendered, the prompt over the raw window. One user message and one answer are appended before each
 * preparation, as a turn does. After `warmup` preparations; the process's RSS is sampled after each.
 */
const prepare = (messages: number, runs: number, warmup: number) => async () => {
  const server = await startModelServerProcess()
  const agent = benchAgent(messages, { model: "bench-model", baseURL: server.baseURL, maxContextTokens: 100_000, recall: false })
  try {
    // The tree, made by `kern segments rebuild` in a process of its own (summaries from the fake model), then one
    // `kern chat` turn, which stores the cut: this process is an agent starting on a session whose tree is built and
    // whose window is cut, as a long-lived agent's is. It reads the session from its cut.
    const kern = (args: ReadonlyArray<string>) => {
      const done = spawnSync(process.execPath, [benchKernBin(), ...args, "--dir", agent.dir], {
        encoding: "utf8",
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", OPENROUTER_API_KEY: "sk-bench" }
      })
      if (done.status !== 0) throw new Error(`kern ${args.join(" ")} failed: ${done.stderr}`)
    }
    kern(["segments", "rebuild"])
    kern(["chat", "-m", "hello"])
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* ContextWindow
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
    server.child.kill()
    agent.remove()
  }
}

/** Peak RSS while preparing: the whole process, in MiB (what the window holds, not the session). */
const peak = (messages: number) => async () => {
  // The short session first: what it leaves in the heap can only raise the long one's figure, never hide it.
  const small = await prepare(2_000, 20, 10)()
  const { rss } = await prepare(messages, 20, 10)()
  return { samples: [Math.max(...rss)], baseline: [Math.max(...small.rss)] }
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "context.prepare.75k",
    unit: "ms",
    usesBuild: true,
    run: async () => {
      const big = await prepare(75_000, 50, 20)()
      // The same on a short session with its tree: flat means the cost does not grow with the session.
      const small = await prepare(2_000, 50, 20)()
      return { samples: big.samples, baseline: small.samples }
    }
  },
  {
    name: "context.prepare.75k.rss",
    unit: "MiB peak RSS",
    usesBuild: true,
    run: peak(75_000)
  }
]
