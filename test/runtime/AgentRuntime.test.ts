import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, PubSub, Queue, TestClock } from "effect"
import * as NodePath from "node:path"
import { AgentRuntime, heartbeatText } from "../../src/runtime/AgentRuntime.js"
import { servingRuntimeLayer } from "../../src/runtime/layers.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

describe("AgentRuntime", () => {
  it.scoped("the heartbeat arrives on the Clock, is never the active channel, and its NO_REPLY is not delivered", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", baseURL: server.baseURL, heartbeatInterval: 30 }) })
      const layer = servingRuntimeLayer.pipe(
        Layer.provideMerge(agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 })),
        Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
        Layer.provide(NodeContext.layer)
      )
      // Built in the test's scope, so the runtime (and its session file) lives until the test ends.
      const runtime = Context.get(yield* Layer.build(layer), AgentRuntime)
      yield* server.reply(FakeReply.text("Checked the notes. NO_REPLY"))
      const events = yield* PubSub.subscribe(runtime.events)
      // Wait until the heartbeat is asleep on the TestClock before moving time.
      while ((yield* TestClock.sleeps()).length === 0) yield* Effect.yieldNow()

      yield* TestClock.adjust("29 minutes")
      expect((yield* server.requests).length).toBe(0)
      yield* TestClock.adjust("1 minute")
      const [request] = yield* server.awaitRequests(1)
      expect(JSON.stringify(request!.body)).toContain(heartbeatText)
      let done: { readonly delivered: boolean } | undefined
      while (done === undefined) {
        const event = yield* Queue.take(events)
        expect(event.conversationId).toBe("heartbeat:heartbeat")
        if (event.type === "incoming") expect(event.interface).toBe("heartbeat")
        if (event.type === "finish") done = event
      }
      expect(done.delivered).toBe(false)
    }))
})
