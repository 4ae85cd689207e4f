import { LanguageModel } from "@effect/ai"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { createServer } from "node:net"
import { fromAiError } from "../../src/model/ProviderError.js"
import { layerFromConfig } from "../../src/model/Provider.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { wakeNextSleeper } from "./clock.js"
import { loadedConfig, withChatModel } from "./harness.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"

/** A loopback port with nothing listening: bind one, note it, close it. */
const closedPort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 1
    server.close(() => resume(Effect.succeed(port)))
  })
})

describe("transport", () => {
  it.scoped("an unreachable server is a network error after 4 attempts", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const baseURL = `http://127.0.0.1:${port}/v1`
      const model = layerFromConfig(loadedConfig({ provider: "ollama", model: "m", baseURL })).pipe(Layer.provide(SpendGuard.layerNone))
      const fiber = yield* LanguageModel.generateText({ prompt: "hi" }).pipe(
        Effect.provide(model.pipe(Layer.provide(NodeHttpClient.layerUndici))),
        Effect.flip,
        Effect.fork
      )
      for (let retry = 0; retry < 3; retry++) yield* wakeNextSleeper
      const error = yield* Fiber.join(fiber)
      const providerError = error._tag === "ModelConfigMissing" ? undefined : fromAiError(error)
      expect(providerError?.reason).toBe("network")
      expect(providerError?.message).toContain(baseURL)
    }))

  it.scoped("anthropic goes to {baseURL}/messages with its key header", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const model = layerFromConfig(
        loadedConfig({ provider: "anthropic", model: "claude-sonnet-4", baseURL: server.baseURL }, { ANTHROPIC_API_KEY: "ak" })
      ).pipe(Layer.provide(SpendGuard.layerNone))
      // The fake server does not speak the Messages API: its 404 proves where the request went.
      const error = yield* LanguageModel.generateText({ prompt: "hi" }).pipe(
        Effect.provide(model.pipe(Layer.provide(NodeHttpClient.layerUndici))),
        Effect.flip
      )
      expect(error._tag === "ModelConfigMissing" ? undefined : fromAiError(error).status).toBe(404)
      const [request] = yield* server.requests
      expect(request?.path).toBe("/messages")
      expect(request?.headers["x-api-key"]).toBe("ak")
      expect(request?.body).toMatchObject({ model: "claude-sonnet-4" })
    }))

  it.scoped("a scripted delay holds the answer until the server's clock passes it", () =>
    withChatModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.text("late", { delay: "30 seconds" }))
        const fiber = yield* Effect.fork(LanguageModel.generateText({ prompt: "hi" }))
        yield* server.awaitRequests(1)
        const delay = yield* wakeNextSleeper
        expect(delay).toBe(30_000)
        expect((yield* Fiber.join(fiber)).text).toBe("late")
      })
    ))
})
