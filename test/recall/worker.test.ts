import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, PubSub, Queue } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { runningAgentLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { Recall } from "../../src/recall/Recall.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { answer, appendLines, header, sessionPath, user } from "./harness.js"

const old = "20250101-100000-000-0000"

/** Polls `check` until it holds (each poll is a real round through kern.db), at most `tries` times. */
const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, tries = 200) =>
  Effect.gen(function*() {
    for (let i = 0; i < tries; i++) {
      if (yield* check) return true
      yield* Effect.sleep("50 millis")
    }
    return false
  })

describe("recall in the running agent", () => {
  it.scopedLive("backfills at start-up while turns go on, then indexes each finished turn in the background", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      // Embeddings answer slowly: the backfill is still running when the turn below is over.
      yield* server.embeddings({ bagOfWords: { dimensions: 16 }, delay: "1500 millis" })
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, {
        ".kern/config.json": JSON.stringify({ model: "m", baseURL: server.baseURL, heartbeatInterval: 0, embeddingModel: "e" }),
        // Sessions from before any kern.db: an empty file says starting the database over is meant.
        ".kern/kern.db": ""
      })
      NodeFs.mkdirSync(NodePath.dirname(sessionPath(dir, old)), { recursive: true })
      appendLines(sessionPath(dir, old), header(old), user("the lighthouse keeper retired in 1998"), answer("noted"))
      const layer = runningAgentLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
        Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
        Layer.provide(NodeContext.layer)
      )
      const context = yield* Layer.build(layer)
      const runtime = Context.get(context, AgentRuntime)
      const recall = Context.get(context, Recall)
      yield* server.reply(FakeReply.text("The ferry leaves at 7:40 from quay 3."))
      const events = yield* PubSub.subscribe(runtime.events)
      yield* runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "when does the ferry leave?" })
      for (;;) {
        const event = yield* Queue.take(events)
        if (event.type === "finish") break
      }
      // The turn is over while the backfill still waits on the embedder: it never waited for indexing.
      expect((yield* recall.stats).backfillRunning).toBe(true)
      // The old session (which the runtime continues) is in (keywords work before its vectors arrive), and the new turn follows.
      const found = (query: string, text: string) =>
        Effect.map(recall.search({ query }), (r) => r.hits[0]?.text.includes(text) === true)
      expect(yield* eventually(found("lighthouse keeper", "the lighthouse keeper retired"))).toBe(true)
      expect(yield* eventually(found("ferry quay", "The ferry leaves at 7:40"))).toBe(true)
      expect(yield* eventually(Effect.map(recall.stats, (s) => !s.backfillRunning && s.unembedded === 0))).toBe(true)
      const stats = yield* recall.stats
      expect(stats).toMatchObject({ sessions: 1, messages: 4, chunks: 2 })
    }))
})
