import { EmbeddingModel } from "@effect/ai"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { embeddingLayerFromConfig } from "../../src/model/Provider.js"
import { make as makeFakeServer } from "../support/fakeModelServer.js"
import { loadedConfig } from "./harness.js"

describe("embeddings", () => {
  it.scoped("embeds through POST /embeddings with deterministic vectors", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const loaded = loadedConfig(
        { provider: "ollama", model: "llama3.1", embeddingModel: "nomic-embed-text", baseURL: server.baseURL }
      )
      const [a, b, again] = yield* Effect.gen(function*() {
        const model = yield* EmbeddingModel.EmbeddingModel
        return yield* model.embedMany(["alpha", "beta", "alpha"])
      }).pipe(Effect.provide(embeddingLayerFromConfig(loaded).pipe(Layer.provide(NodeHttpClient.layerUndici))))
      expect(a).toHaveLength(8)
      expect(again).toEqual(a)
      expect(b).not.toEqual(a)
      const [request] = yield* server.requests
      expect(request?.path).toBe("/embeddings")
      expect(request?.body).toMatchObject({ model: "nomic-embed-text", input: ["alpha", "beta", "alpha"] })
    }))

  it.effect("turned off embeddings fail to build with a message naming embeddingModel", () =>
    Effect.gen(function*() {
      const loaded = loadedConfig({ provider: "anthropic", model: "claude-sonnet-4" }, { ANTHROPIC_API_KEY: "k" })
      const error = yield* EmbeddingModel.EmbeddingModel.pipe(
        Effect.provide(embeddingLayerFromConfig(loaded).pipe(Layer.provide(NodeHttpClient.layerUndici))),
        Effect.flip
      )
      expect(error.reason).toBe("embedding_model")
      expect(error.message).toContain("embeddingModel")
    }))
})
