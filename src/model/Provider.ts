import { LanguageModel } from "@effect/ai"
import type { HttpClient } from "@effect/platform"
import { Effect, Either, Layer, Option } from "effect"
import { AgentConfig, type LoadedConfig } from "../config/AgentConfig.js"
import * as ChatCompletions from "./ChatCompletionsLanguageModel.js"
import { guardLanguageModel } from "./guardedModel.js"
import { HeartbeatModel } from "./HeartbeatModel.js"
import {
  ModelConfigMissing,
  type ModelPurpose,
  type ModelSettings,
  resolveModelSettings
} from "./ModelSettings.js"
import { SpendGuard } from "./SpendGuard.js"

export interface ModelLayerOptions {
  /** Retry 429, 5xx and network failures per HTTP request (default true). */
  readonly retry?: boolean | undefined
}

const LanguageModelTag = LanguageModel.LanguageModel

/** OpenRouter attributes requests to apps by this header; other servers ignore it. */
const openRouterHeaders = { "X-Title": "kern" }

/**
 * The provider SDKs (@effect/ai-openai with its tokenizer data, @effect/ai-anthropic) are imported when a model that
 * speaks their protocol is built, not when kern starts: most agents speak Chat Completions through kern's own model,
 * and a command line that loads no SDK starts in a fraction of the time.
 */
const openAiResponses = Effect.promise(() => import("./OpenAiResponses.js"))
const anthropicMessages = Effect.promise(() => import("./AnthropicMessages.js"))

/**
 * The LanguageModel for resolved settings: the Responses API through @effect/ai-openai, Chat Completions through
 * kern's own model, or Anthropic's Messages API through @effect/ai-anthropic; behind the spend ceiling whichever it
 * is (SpendGuard): every LanguageModel kern builds is built here.
 */
export const languageModelLayer = (
  settings: ModelSettings,
  options: ModelLayerOptions = {}
): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient | SpendGuard> =>
  Layer.effect(
    LanguageModelTag,
    Effect.map(Effect.zip(LanguageModelTag, SpendGuard), ([model, guard]) => guardLanguageModel(model, settings.model, guard))
  ).pipe(Layer.provide(providerLayer(settings, options)))

/** The provider's own LanguageModel, unguarded: only languageModelLayer builds on it. */
const providerLayer = (
  settings: ModelSettings,
  options: ModelLayerOptions
): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> => {
  switch (settings.wire) {
    case "chat":
      return ChatCompletions.layer({
        model: settings.model,
        baseURL: settings.baseURL,
        apiKey: Option.getOrUndefined(settings.apiKey),
        provider: settings.provider,
        keyEnv: settings.keyEnv,
        headers: settings.provider === "openrouter" ? openRouterHeaders : undefined,
        retry: options.retry
      })
    case "responses":
      return Layer.unwrapEffect(Effect.map(openAiResponses, (module) => module.languageModelLayer(settings, options)))
    case "anthropic":
      return Layer.unwrapEffect(Effect.map(anthropicMessages, (module) => module.languageModelLayer(settings, options)))
  }
}

/** The agent's model from a loaded config; `purpose: "summary"` uses `summaryModel` when set. */
export const layerFromConfig = (
  loaded: Pick<LoadedConfig, "config" | "env">,
  options: ModelLayerOptions & { readonly purpose?: ModelPurpose } = {}
): Layer.Layer<LanguageModel.LanguageModel, ModelConfigMissing, HttpClient.HttpClient | SpendGuard> =>
  Either.match(resolveModelSettings(loaded, options.purpose), {
    onLeft: (error) => Layer.fail(error),
    onRight: (settings) => languageModelLayer(settings, options)
  })

/** The agent's model, configured by AgentConfig. */
export const layer: Layer.Layer<
  LanguageModel.LanguageModel,
  ModelConfigMissing,
  AgentConfig | HttpClient.HttpClient | SpendGuard
> = Layer.unwrapEffect(Effect.map(AgentConfig, (loaded) => layerFromConfig(loaded)))

/** The model that writes summaries: `summaryModel`, else `model`. */
export const summaryLayer: Layer.Layer<
  LanguageModel.LanguageModel,
  ModelConfigMissing,
  AgentConfig | HttpClient.HttpClient | SpendGuard
> = Layer.unwrapEffect(Effect.map(AgentConfig, (loaded) => layerFromConfig(loaded, { purpose: "summary" })))

/** HeartbeatModel from the config: the agent's LanguageModel itself unless `heartbeatModel` names another. */
export const heartbeatLayer: Layer.Layer<
  HeartbeatModel,
  ModelConfigMissing,
  AgentConfig | HttpClient.HttpClient | LanguageModel.LanguageModel | SpendGuard
> = Layer.unwrapEffect(Effect.map(AgentConfig, (loaded): Layer.Layer<
  HeartbeatModel,
  ModelConfigMissing,
  HttpClient.HttpClient | LanguageModel.LanguageModel | SpendGuard
> => {
  const modelId = loaded.config.heartbeatModel
  if (modelId === undefined) {
    return Layer.effect(
      HeartbeatModel,
      Effect.map(LanguageModelTag, (model) => ({ modelId: loaded.config.model ?? "", model }))
    )
  }
  return Layer.effect(HeartbeatModel, Effect.map(LanguageModelTag, (model) => ({ modelId, model }))).pipe(
    Layer.provide(layerFromConfig(loaded, { purpose: "heartbeat" }))
  )
}))
