import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { makeRunTurn } from "../../src/turn/runTurn.js"
import { FakeReply, make as fakeModelServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

/**
 * The agent's model requests go over kern's lean client (src/model/ModelHttpClient.ts), not over the undici client
 * that the agent's channels and the media share: that one (@effect/platform's) makes a span per request and sends its
 * trace headers, which the lean one never does. The runtime's layers once handed the model the shared one: the
 * redacting door over both clients is one layer, built once per build.
 */
describe("the running agent's model client", () => {
  it.live("a turn's model request carries no trace header: it went over ModelHttpClient", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* fakeModelServer
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, {
        ".kern/config.json": JSON.stringify({ model: "test-model", baseURL: server.baseURL, recall: false }),
        "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n"
      })
      const runtime = agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
        Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
        Layer.provide(NodeContext.layer)
      )
      yield* server.reply(FakeReply.text("hello"))
      const outcome = yield* Effect.gen(function*() {
        const { session } = yield* openActiveSession()
        const queue = yield* MessageQueue
        const runTurn = yield* makeRunTurn
        yield* queue.offer({ interface: "web", channel: "web:1", userId: "u1", text: "hi" })
        return yield* runTurn({ session: () => Effect.succeed(session), emit: () => Effect.void })
      }).pipe(Effect.provide(runtime))
      expect(outcome.failure).toBeUndefined()
      expect(outcome.reply).toBe("hello")
      const [request, ...more] = yield* server.modelRequests
      expect(more).toEqual([])
      expect(request?.path).toBe("/chat/completions")
      expect(request?.headers["authorization"]).toBe("Bearer sk-test")
      expect(Object.keys(request?.headers ?? {}).filter((name) => name === "traceparent" || name === "b3")).toEqual([])
    })))
})
