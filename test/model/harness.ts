import type { LanguageModel } from "@effect/ai"
import type { HttpClient, HttpServerError } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Schema, type Scope } from "effect"
import type { LoadedConfig } from "../../src/config/AgentConfig.js"
import { KernConfigFile } from "../../src/config/schema.js"
import { layerFromConfig } from "../../src/model/Provider.js"
import { make as makeFakeServer, type FakeModelServerShape } from "../support/fakeModelServer.js"
import { TestToolkitLive } from "./tools.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"
import * as ModelHttpClient from "../../src/model/ModelHttpClient.js"

export type ModelTestEnv = LanguageModel.LanguageModel | Layer.Layer.Success<typeof TestToolkitLive>

/** A LoadedConfig's config and env as the config service would produce them. */
export const loadedConfig = (
  file: Record<string, unknown>,
  env: Record<string, string> = {}
): Pick<LoadedConfig, "config" | "env"> => ({
  config: { ...Schema.decodeUnknownSync(KernConfigFile)(file), name: "test-agent" },
  env
})

/**
 * Runs `body` against a fresh fake server, with the model that provider selection builds from `file`
 * (its baseURL pointed at the server).
 */
export const withModel = <A, E>(
  file: Record<string, unknown>,
  body: (server: FakeModelServerShape) => Effect.Effect<A, E, ModelTestEnv>,
  env: Record<string, string> = { OPENROUTER_API_KEY: "sk-test", OPENAI_API_KEY: "sk-test" },
  http: Layer.Layer<HttpClient.HttpClient> = NodeHttpClient.layerUndici
): Effect.Effect<A, E | HttpServerError.ServeError | import("../../src/model/ModelSettings.js").ModelConfigMissing, Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* makeFakeServer
    const model = layerFromConfig(loadedConfig({ ...file, baseURL: server.baseURL }, env)).pipe(Layer.provide(SpendGuard.layerNone))
    return yield* body(server).pipe(
      Effect.provide(Layer.mergeAll(model, TestToolkitLive).pipe(Layer.provide(http)))
    )
  })

/** kern's Chat Completions model as OpenRouter would be configured. */
export const withChatModel = <A, E>(body: (server: FakeModelServerShape) => Effect.Effect<A, E, ModelTestEnv>) =>
  withModel({ provider: "openrouter", model: "test-model" }, body)

/** kern's Chat Completions model over the client a running agent gives it (src/model/ModelHttpClient.ts). */
export const withLeanChatModel = <A, E>(body: (server: FakeModelServerShape) => Effect.Effect<A, E, ModelTestEnv>) =>
  withModel({ provider: "openrouter", model: "test-model" }, body, undefined, ModelHttpClient.layer)

/** @effect/ai-openai's Responses model over that client: it reads bodies as Streams, which the client gives too. */
export const withLeanResponsesModel = <A, E>(body: (server: FakeModelServerShape) => Effect.Effect<A, E, ModelTestEnv>) =>
  withModel({ provider: "openai", model: "gpt-test" }, body, undefined, ModelHttpClient.layer)

/** @effect/ai-openai's Responses model as OpenAI would be configured. */
export const withResponsesModel = <A, E>(body: (server: FakeModelServerShape) => Effect.Effect<A, E, ModelTestEnv>) =>
  withModel({ provider: "openai", model: "gpt-test" }, body)
