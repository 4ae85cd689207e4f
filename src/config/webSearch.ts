import { Schema } from "effect"

const Text = Schema.NonEmptyTrimmedString.annotations({ identifier: "a non-empty string" })
const HttpUrl = Text.pipe(Schema.filter((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol)))
  .annotations({ identifier: "an http(s) URL" })
const EnvName = Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/)).annotations({
  identifier: "an environment variable name"
})

export const searchProviders = ["searxng", "brave", "tavily"] as const
export const SearchProvider = Schema.Literal(...searchProviders)
export type SearchProvider = typeof SearchProvider.Type

/**
 * `webSearch`: where web_search asks. `url` replaces the provider's base URL (a SearXNG instance has no other);
 * the key is read from the variable `apiKeyEnv` names (`.kern/.env`), BRAVE_API_KEY or TAVILY_API_KEY by default.
 */
export const WebSearchConfig = Schema.Struct({
  provider: SearchProvider,
  url: Schema.optional(HttpUrl),
  apiKeyEnv: Schema.optional(EnvName)
}).pipe(
  Schema.filter((config) =>
    config.provider !== "searxng" || config.url !== undefined ||
    "provider \"searxng\" needs \"url\", the address of the instance (e.g. \"http://127.0.0.1:8888\")"
  )
)
export type WebSearchConfig = typeof WebSearchConfig.Type

export const webSearchExpectation =
  "an object { provider: \"searxng\" | \"brave\" | \"tavily\", url?, apiKeyEnv? } (searxng needs url, the instance's address)"

/** The variable a provider's key is read from by default; SearXNG takes none. */
const defaultKeyEnv: Record<SearchProvider, string | undefined> = {
  searxng: undefined,
  brave: "BRAVE_API_KEY",
  tavily: "TAVILY_API_KEY"
}

/** The variable that holds the configured provider's key, if it takes one. */
export const searchKeyEnvFor = (config: WebSearchConfig): string | undefined =>
  config.apiKeyEnv ?? defaultKeyEnv[config.provider]

/** Where each provider is asked when `url` is not set. */
export const defaultSearchUrl: Record<Exclude<SearchProvider, "searxng">, string> = {
  brave: "https://api.search.brave.com",
  tavily: "https://api.tavily.com"
}
