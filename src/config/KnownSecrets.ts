import { Context, Effect, Layer } from "effect"
import { AgentConfig, type LoadedConfig } from "./AgentConfig.js"
import { apiKeyEnvFor } from "./providers.js"

/** A secret by the name of the variable that holds it. */
export interface KnownSecret {
  readonly name: string
  readonly value: string
}

/**
 * The secrets kern knows, one list for every guard: the kernel refuses a risky call whose arguments carry one,
 * redacts them from tool results, and bash is never handed the variables that hold them.
 */
export interface KnownSecretsService {
  /** Longest value first, so a secret that contains another is replaced whole. */
  readonly secrets: ReadonlyArray<KnownSecret>
}

export class KnownSecrets extends Context.Tag("kern/config/KnownSecrets")<KnownSecrets, KnownSecretsService>() {}

/** Shorter values would match ordinary words and numbers; real keys and tokens are far longer. */
export const minSecretLength = 8

/** Tokens kern itself reads from the environment, whether or not they sit in `.kern/.env`. */
const kernTokens = ["KERN_AUTH_TOKEN", "TELEGRAM_BOT_TOKEN", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"]

/** Secrets from name → value pairs: values shorter than 8 characters are left out, a value named twice kept once. */
export const make = (pairs: Iterable<readonly [string, string]>): KnownSecretsService => {
  const byValue = new Map<string, string>()
  for (const [name, value] of pairs) {
    if (value.length >= minSecretLength && !byValue.has(value)) byValue.set(value, name)
  }
  const secrets = [...byValue].map(([value, name]) => ({ name, value }))
  secrets.sort((a, b) => b.value.length - a.value.length || a.name.localeCompare(b.name))
  return { secrets }
}

/** The `.kern/.env` values, the configured provider key and the tokens kern reads, from the loaded config. */
export const fromConfig = (loaded: LoadedConfig): KnownSecretsService => {
  const keyEnv = apiKeyEnvFor(loaded.config)
  const names = [...loaded.secretKeys, ...(keyEnv === undefined ? [] : [keyEnv]), ...kernTokens]
  return make(names.flatMap((name) => {
    const value = loaded.env[name]
    return value === undefined ? [] : [[name, value] as const]
  }))
}

/** The secrets of the loaded agent folder. */
export const layer: Layer.Layer<KnownSecrets, never, AgentConfig> = Layer.effect(KnownSecrets, Effect.map(AgentConfig, fromConfig))

/** The secrets of a config already loaded. */
export const layerOf = (loaded: LoadedConfig): Layer.Layer<KnownSecrets> => Layer.succeed(KnownSecrets, fromConfig(loaded))

/** Given secrets (tests, embedding apps); `layerNone` knows none. */
export const layerFrom = (pairs: Readonly<Record<string, string>>): Layer.Layer<KnownSecrets> =>
  Layer.succeed(KnownSecrets, make(Object.entries(pairs)))

export const layerNone: Layer.Layer<KnownSecrets> = layerFrom({})
