import { Context, Effect, Layer } from "effect"
import { AgentConfig, type LoadedConfig } from "./AgentConfig.js"
import { secretReferences } from "./mcpServers.js"
import { databaseSecretNames, databaseTarget } from "./database.js"
import { otelHeaderSecrets } from "./otelSettings.js"
import { apiKeyEnvFor } from "./providers.js"
import { isSecretVariable } from "./secretNames.js"
import { searchKeyEnvFor } from "./webSearch.js"

/**
 * A secret by the name of the variable that holds it. `agent`: a value kern itself reads (`.kern/.env`, the provider
 * key, its tokens); `shell`: another inherited variable named like a secret (`GITHUB_TOKEN`), which the operator may
 * still hand to bash through `bashEnv`.
 */
export interface KnownSecret {
  readonly name: string
  readonly value: string
  readonly origin: "agent" | "shell"
}

/**
 * The secrets kern knows, one list for every guard and the one redactor (src/kernel/secretGuard.ts) for everything
 * kern stores, indexes, shows or sends: the kernel refuses a risky call whose arguments carry one, tool results,
 * sessions, recall, model and channel requests and HTTP responses have them replaced by `[redacted:NAME]`, and bash is
 * never handed the variables that hold kern's own.
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

/**
 * Secrets from name → value pairs (kern's own, then the shell's): values shorter than 8 characters are left out, a
 * value named twice kept once, as kern's own if it is.
 */
export const make = (
  pairs: Iterable<readonly [string, string]>,
  shellPairs: Iterable<readonly [string, string]> = []
): KnownSecretsService => {
  const byValue = new Map<string, KnownSecret>()
  const add = (origin: KnownSecret["origin"]) => ([name, value]: readonly [string, string]) => {
    if (value.length >= minSecretLength && !byValue.has(value)) byValue.set(value, { name, value, origin })
  }
  for (const pair of pairs) add("agent")(pair)
  for (const pair of shellPairs) add("shell")(pair)
  const secrets = [...byValue.values()]
  secrets.sort((a, b) => b.value.length - a.value.length || a.name.localeCompare(b.name))
  return { secrets }
}

/**
 * The `.kern/.env` values, the configured provider key and web search key, the tokens kern reads and the variables MCP servers' env and
 * headers reference (`"${GITHUB_TOKEN}"`), the header values sent to an OpenTelemetry collector, then every other inherited variable
 * named like a secret (`AWS_SECRET_ACCESS_KEY`, another provider's key), from the loaded config.
 */
export const fromConfig = (loaded: LoadedConfig): KnownSecretsService => {
  const keyEnv = apiKeyEnvFor(loaded.config)
  const searchKeyEnv = loaded.config.webSearch === undefined ? undefined : searchKeyEnvFor(loaded.config.webSearch)
  const names = new Set([
    ...loaded.secretKeys,
    ...(keyEnv === undefined ? [] : [keyEnv]),
    ...(searchKeyEnv === undefined ? [] : [searchKeyEnv]),
    ...kernTokens,
    ...secretReferences(loaded.config.mcpServers),
    ...databaseSecretNames(loaded.config.database)
  ])
  const pairsOf = (of: Iterable<string>) =>
    [...of].flatMap((name) => {
      const value = loaded.env[name]
      return value === undefined ? [] : [[name, value] as const]
    })
  // What reaches an OpenTelemetry collector as a header (an API key) is a secret too, whichever variable holds it.
  const otelHeaders = otelHeaderSecrets(loaded.config.otel, loaded.env)
  // The password of `database.url`, whether written in config.json or referenced from a variable.
  const database = databaseTarget(loaded.config, loaded.env, loaded.paths.dbFile)
  const databasePassword = database._tag === "Right" && database.right._tag === "postgres" && database.right.password !== undefined
    ? [["DATABASE_PASSWORD", database.right.password] as const]
    : []
  return make([...pairsOf(names), ...otelHeaders, ...databasePassword], pairsOf(Object.keys(loaded.env).filter((name) => !names.has(name) && isSecretVariable(name))))
}

/** The secrets of the loaded agent folder. */
export const layer: Layer.Layer<KnownSecrets, never, AgentConfig> = Layer.effect(KnownSecrets, Effect.map(AgentConfig, fromConfig))

/** The secrets of a config already loaded. */
export const layerOf = (loaded: LoadedConfig): Layer.Layer<KnownSecrets> => Layer.succeed(KnownSecrets, fromConfig(loaded))

/** Given secrets (tests, embedding apps); `layerNone` knows none. */
export const layerFrom = (pairs: Readonly<Record<string, string>>): Layer.Layer<KnownSecrets> =>
  Layer.succeed(KnownSecrets, make(Object.entries(pairs)))

export const layerNone: Layer.Layer<KnownSecrets> = layerFrom({})
