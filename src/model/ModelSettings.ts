import { Either, Option, Redacted, Schema } from "effect"
import type { LoadedConfig } from "../config/AgentConfig.js"
import { apiKeyEnvFor, baseURLEnvProblem } from "../config/providers.js"
import type { KernConfig, Provider } from "../config/schema.js"

/** Configuration that keeps kern from building a model; the message names the keys and variables to set. */
export class ModelConfigMissing extends Schema.TaggedError<ModelConfigMissing>()("ModelConfigMissing", {
  reason: Schema.Literal("model", "api_key", "base_url", "api", "embedding_model"),
  message: Schema.String
}) {}

/** What a model is for: the agent's turns, summaries (`summaryModel`) or heartbeat turns (`heartbeatModel`). */
export type ModelPurpose = "chat" | "summary" | "heartbeat"

/** Which wire protocol a model speaks. */
export type ModelWire = "responses" | "chat" | "anthropic"

/** Everything needed to build a model layer, resolved from config and environment. */
export interface ModelSettings {
  readonly provider: Provider
  readonly wire: ModelWire
  readonly model: string
  readonly baseURL: string
  readonly apiKey: Option.Option<Redacted.Redacted>
  /** The variable the key came from (named in auth errors); undefined when the provider needs none. */
  readonly keyEnv: string | undefined
}

export const defaultBaseURL: Readonly<Record<Provider, string>> = {
  openai: "https://api.openai.com/v1",
  openrouter: "https://openrouter.ai/api/v1",
  ollama: "http://localhost:11434/v1",
  "openai-compatible": "",
  anthropic: "https://api.anthropic.com/v1"
}

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim()

/** Ollama's own variables often name the server root; its OpenAI-style API lives under /v1. */
const withV1 = (url: string): string => {
  const trimmed = url.replace(/\/+$/, "")
  return /^[a-z]+:\/\/[^/]+$/i.test(trimmed) ? `${trimmed}/v1` : trimmed
}

const baseURLFor = (config: KernConfig, env: Readonly<Record<string, string>>): string | undefined => {
  const configured = nonEmpty(config.baseURL)
  if (configured !== undefined) return configured
  switch (config.provider) {
    case "openai":
      return nonEmpty(env["OPENAI_BASE_URL"]) ?? defaultBaseURL.openai
    case "ollama": {
      const fromEnv = nonEmpty(env["OLLAMA_BASE_URL"])
      return fromEnv === undefined ? defaultBaseURL.ollama : withV1(fromEnv)
    }
    case "openai-compatible":
      return nonEmpty(env["OPENAI_BASE_URL"])
    default:
      return defaultBaseURL[config.provider]
  }
}

const wireFor = (config: KernConfig): Either.Either<ModelWire, ModelConfigMissing> => {
  switch (config.provider) {
    case "openai":
      return Either.right(config.api === "chat" ? "chat" : "responses")
    case "anthropic":
      return config.api === "responses"
        ? Either.left(
          new ModelConfigMissing({
            reason: "api",
            message: "provider \"anthropic\" does not speak the Responses API: remove \"api\" from .kern/config.json " +
              "or set it to \"chat\""
          })
        )
        : Either.right(config.api === "chat" ? "chat" : "anthropic")
    default:
      return Either.right(config.api === "responses" ? "responses" : "chat")
  }
}

const missingKey = (provider: Provider, keyEnv: string) =>
  new ModelConfigMissing({
    reason: "api_key",
    message: `no API key for provider "${provider}": set ${keyEnv} in .kern/.env or the environment ` +
      "(or name another variable with \"apiKeyEnv\" in .kern/config.json)"
  })

const resolveKey = (config: KernConfig, env: Readonly<Record<string, string>>) => {
  const keyEnv = apiKeyEnvFor(config)
  if (keyEnv === undefined) return Either.right({ keyEnv, apiKey: Option.none<Redacted.Redacted>() })
  const value = nonEmpty(env[keyEnv])
  return value === undefined
    ? Either.left(missingKey(config.provider, keyEnv))
    : Either.right({ keyEnv, apiKey: Option.some(Redacted.make(value)) })
}

const resolveBaseURL = (config: KernConfig, env: Readonly<Record<string, string>>) => {
  const baseURL = baseURLFor(config, env)
  const badURL = baseURLEnvProblem(config, env)
  if (badURL !== undefined) return Either.left(new ModelConfigMissing({ reason: "base_url", message: badURL }))
  return baseURL === undefined
    ? Either.left(
      new ModelConfigMissing({
        reason: "base_url",
        message: `no base URL for provider "${config.provider}": set "baseURL" in .kern/config.json or OPENAI_BASE_URL ` +
          "(for example http://localhost:8000/v1)"
      })
    )
    : Either.right(baseURL)
}

/**
 * The model an agent talks to (`purpose: "summary"` prefers `summaryModel`, `"heartbeat"` `heartbeatModel`). Fails when the model, the key or
 * the base URL is missing, naming what to set.
 */
export const resolveModelSettings = (
  loaded: Pick<LoadedConfig, "config" | "env">,
  purpose: ModelPurpose = "chat"
): Either.Either<ModelSettings, ModelConfigMissing> =>
  Either.gen(function*() {
    const { config, env } = loaded
    const model = nonEmpty(
      purpose === "summary"
        ? config.summaryModel ?? config.model
        : purpose === "heartbeat"
        ? config.heartbeatModel ?? config.model
        : config.model
    )
    if (model === undefined) {
      return yield* Either.left(
        new ModelConfigMissing({
          reason: "model",
          message: `no model configured for provider "${config.provider}": set "model" in .kern/config.json or KERN_MODEL`
        })
      )
    }
    const wire = yield* wireFor(config)
    const baseURL = yield* resolveBaseURL(config, env)
    const { apiKey, keyEnv } = yield* resolveKey(config, env)
    return { provider: config.provider, wire, model, baseURL, apiKey, keyEnv }
  })

/** The embedding model a provider offers when `embeddingModel` is not set; none for Anthropic. */
const defaultEmbeddingModel: Readonly<Record<Provider, string | undefined>> = {
  openai: "text-embedding-3-small",
  openrouter: "openai/text-embedding-3-small",
  ollama: "nomic-embed-text",
  "openai-compatible": undefined,
  anthropic: undefined
}

/**
 * The embedding model (`POST {baseURL}/embeddings`), or none when `embeddingModel` is false or the provider has
 * no default. Shares the provider's base URL and key.
 */
export const resolveEmbeddingSettings = (
  loaded: Pick<LoadedConfig, "config" | "env">
): Either.Either<Option.Option<ModelSettings>, ModelConfigMissing> =>
  Either.gen(function*() {
    const { config, env } = loaded
    if (config.embeddingModel === false) return Option.none()
    const model = config.embeddingModel ?? defaultEmbeddingModel[config.provider]
    if (model === undefined) return Option.none()
    const baseURL = yield* resolveBaseURL(config, env)
    const { apiKey, keyEnv } = yield* resolveKey(config, env)
    return Option.some({ provider: config.provider, wire: "responses" as const, model, baseURL, apiKey, keyEnv })
  })
