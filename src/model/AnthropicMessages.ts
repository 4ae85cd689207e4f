import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { Layer, Option } from "effect"
import type { ModelLayerOptions } from "./Provider.js"
import type { ModelSettings } from "./ModelSettings.js"
import { retryingClient } from "./ProviderRetry.js"

// Anthropic's Messages API through @effect/ai-anthropic, with kern's retries. Provider.ts imports this module only
// when a model speaks it, so every other command line never loads the SDK.

/** A LanguageModel over Anthropic's Messages API at `settings.baseURL`. */
export const languageModelLayer = (settings: ModelSettings, options: ModelLayerOptions) =>
  AnthropicLanguageModel.layer({ model: settings.model }).pipe(
    Layer.provide(AnthropicClient.layer({
      apiKey: Option.getOrUndefined(settings.apiKey),
      // The Anthropic client appends /v1/messages itself.
      apiUrl: settings.baseURL.replace(/\/+$/, "").replace(/\/v1$/, ""),
      ...(options.retry === false ? {} : {
        transformClient: retryingClient({
          provider: settings.provider,
          baseURL: settings.baseURL,
          keyEnv: settings.keyEnv
        })
      })
    }))
  )
