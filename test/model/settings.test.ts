import { describe, expect, it } from "@effect/vitest"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Either, Layer, Option, Redacted } from "effect"
import { LanguageModel } from "@effect/ai"
import { AgentConfig } from "../../src/config/AgentConfig.js"
import { agentPaths } from "../../src/config/paths.js"
import { resolveEmbeddingSettings, resolveModelSettings } from "../../src/model/ModelSettings.js"
import * as Provider from "../../src/model/Provider.js"
import { loadedConfig } from "./harness.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"

const settings = (file: Record<string, unknown>, env: Record<string, string> = {}) =>
  resolveModelSettings(loadedConfig(file, env))

const left = <A, E>(either: Either.Either<A, E>): E => Either.getOrThrow(Either.flip(either))
const right = <A, E>(either: Either.Either<A, E>): A => Either.getOrThrow(either)

describe("provider selection", () => {
  it("openai speaks Responses unless api is chat", () => {
    const responses = right(settings({ provider: "openai", model: "gpt-4.1" }, { OPENAI_API_KEY: "k" }))
    expect([responses.wire, responses.baseURL, responses.keyEnv]).toEqual(["responses", "https://api.openai.com/v1", "OPENAI_API_KEY"])
    expect(Option.map(responses.apiKey, Redacted.value)).toEqual(Option.some("k"))
    expect(right(settings({ provider: "openai", model: "m", api: "chat" }, { OPENAI_API_KEY: "k" })).wire).toBe("chat")
  })

  it("openrouter, ollama and openai-compatible speak Chat Completions unless api is responses", () => {
    const openrouter = right(settings({ provider: "openrouter", model: "openai/gpt-4.1" }, { OPENROUTER_API_KEY: "k" }))
    expect([openrouter.wire, openrouter.baseURL]).toEqual(["chat", "https://openrouter.ai/api/v1"])
    const ollama = right(settings({ provider: "ollama", model: "llama3.1" }))
    expect([ollama.wire, ollama.baseURL, ollama.keyEnv, ollama.apiKey]).toEqual(
      ["chat", "http://localhost:11434/v1", undefined, Option.none()]
    )
    expect(right(settings({ provider: "ollama", model: "m" }, { OLLAMA_BASE_URL: "http://gpu:11434" })).baseURL)
      .toBe("http://gpu:11434/v1")
    const compatible = right(
      settings({ provider: "openai-compatible", model: "m" }, { OPENAI_BASE_URL: "http://vllm:8000/v1", OPENAI_API_KEY: "k" })
    )
    expect([compatible.wire, compatible.baseURL]).toEqual(["chat", "http://vllm:8000/v1"])
    expect(right(settings({ provider: "ollama", model: "m", api: "responses" })).wire).toBe("responses")
  })

  it("anthropic uses its Messages API, or Chat Completions with api chat; never Responses", () => {
    const env = { ANTHROPIC_API_KEY: "k" }
    expect(right(settings({ provider: "anthropic", model: "claude-sonnet-4" }, env)).wire).toBe("anthropic")
    expect(right(settings({ provider: "anthropic", model: "claude-sonnet-4", api: "chat" }, env)).wire).toBe("chat")
    expect(left(settings({ provider: "anthropic", model: "m", api: "responses" }, env)).reason).toBe("api")
  })

  it("a missing key names the variable and the apiKeyEnv key", () => {
    const error = left(settings({ provider: "openrouter", model: "m" }))
    expect(error.reason).toBe("api_key")
    expect(error.message).toContain("OPENROUTER_API_KEY")
    expect(error.message).toContain("apiKeyEnv")
    const custom = left(settings({ provider: "openai", model: "m", apiKeyEnv: "WORK_OPENAI_KEY" }))
    expect(custom.message).toContain("WORK_OPENAI_KEY")
  })

  it("a missing model or base URL names the keys to set", () => {
    const model = left(settings({ provider: "ollama" }))
    expect(model.reason).toBe("model")
    expect(model.message).toContain("\"model\"")
    expect(model.message).toContain("KERN_MODEL")
    const base = left(settings({ provider: "openai-compatible", model: "m" }, { OPENAI_API_KEY: "k" }))
    expect(base.reason).toBe("base_url")
    expect(base.message).toContain("OPENAI_BASE_URL")
  })

  it("summary purpose prefers summaryModel", () => {
    const loaded = loadedConfig({ provider: "ollama", model: "big", summaryModel: "small" })
    expect(right(resolveModelSettings(loaded, "summary")).model).toBe("small")
    expect(right(resolveModelSettings(loaded)).model).toBe("big")
  })

  it("embeddings: provider default, explicit model, or off", () => {
    const model = (file: Record<string, unknown>) =>
      right(resolveEmbeddingSettings(loadedConfig(file, { OPENAI_API_KEY: "k" }))).pipe(Option.map((s) => s.model))
    expect(model({ provider: "openai", model: "m" })).toEqual(Option.some("text-embedding-3-small"))
    expect(model({ provider: "ollama", model: "m", embeddingModel: "bge-m3" })).toEqual(Option.some("bge-m3"))
    expect(model({ provider: "openai", model: "m", embeddingModel: false })).toEqual(Option.none())
    expect(model({ provider: "anthropic", model: "m" })).toEqual(Option.none())
  })

  it.effect("the AgentConfig layer fails to build with the missing-key message", () =>
    Effect.gen(function*() {
      const loaded = loadedConfig({ provider: "openrouter", model: "m" })
      const config = Layer.succeed(AgentConfig, {
        ...loaded,
        paths: agentPaths("/tmp/kern-model-test"),
        fileExists: true,
        secretKeys: [],
        warnings: []
      })
      const error = yield* LanguageModel.generateText({ prompt: "hi" }).pipe(
        Effect.provide(Provider.layer.pipe(Layer.provide(SpendGuard.layerNone)).pipe(Layer.provide(Layer.merge(config, NodeHttpClient.layerUndici)))),
        Effect.flip
      )
      expect(error._tag).toBe("ModelConfigMissing")
      expect(error.message).toContain("OPENROUTER_API_KEY")
    }))
})
