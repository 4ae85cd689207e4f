import { Duration, Effect, Either, Schema } from "effect"
import { AgentConfig } from "../../config/AgentConfig.js"
import { parseJsonText } from "../../config/json.js"
import { searchKeyEnvFor } from "../../config/webSearch.js"
import { toolFailure } from "../../kernel/ToolFailure.js"
import type { ToolMetadata } from "../toolMetadata.js"
import { notJsonFailure, providerName, statusFailure } from "./answerFailure.js"
import { decodeAnswer, Recency, type SearchResult, searchRequest } from "./providers.js"
import { SearchHttpClient } from "./SearchHttpClient.js"

export const webSearchDefaultLimit = 5
export const webSearchMaxLimit = 20
/** How long the provider has to answer; the kernel's timeout for the call is longer. */
export const webSearchTimeoutMs = 20_000

export const WebSearchArgs = Schema.Struct({
  query: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(400)).annotations({
    description: "What to search for, as you would type it into a search engine"
  }),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, webSearchMaxLimit)).annotations({
    description: `Most results to return (default ${webSearchDefaultLimit}, at most ${webSearchMaxLimit})`
  })),
  recency: Schema.optional(Recency.annotations({ description: "Only pages from the last day, week, month or year" }))
})
export type WebSearchArgs = typeof WebSearchArgs.Type

export const webSearchTool: ToolMetadata = {
  toolId: "web_search",
  name: "WebSearch",
  description: "Search the web: returns title, URL and snippet of each result. Read a page with webfetch. " +
    "recency limits results to the last day, week, month or year.",
  safetyClass: "NETWORK",
  idempotent: true,
  timeoutMs: 30_000,
  scope: "read"
}

export const noSearchProvider = "no search provider configured: set \"webSearch\" in .kern/config.json, e.g. " +
  "{ \"provider\": \"searxng\", \"url\": \"http://127.0.0.1:8888\" } or { \"provider\": \"brave\" } with BRAVE_API_KEY in .kern/.env"

export interface WebSearchOutput {
  readonly provider: string
  readonly query: string
  readonly results: ReadonlyArray<SearchResult>
  readonly text: string
}

const resultsText = (query: string, results: ReadonlyArray<SearchResult>): string =>
  results.length === 0
    ? `no results for ${JSON.stringify(query)}`
    : results.map((r, i) => `${i + 1}. ${r.title === "" ? r.url : r.title}\n   ${r.url}${r.snippet === "" ? "" : `\n   ${r.snippet}`}`)
      .join("\n\n")

/** web_search({ query, limit?, recency? }): asks the configured provider and returns its results as title, URL, snippet. */
export const webSearch = Effect.fn("kern.tools.web_search")(function*(args: WebSearchArgs) {
  const { config: { webSearch: settings }, env } = yield* AgentConfig
  if (settings === undefined) return yield* toolFailure("VALIDATION_ERROR", noSearchProvider)
  const keyEnv = searchKeyEnvFor(settings)
  const key = keyEnv === undefined ? undefined : (env[keyEnv] ?? "").trim()
  if (keyEnv !== undefined && key === "") {
    return yield* toolFailure(
      "VALIDATION_ERROR",
      `no API key for ${providerName(settings.provider)}: set ${keyEnv} in .kern/.env (or name another variable with webSearch.apiKeyEnv)`
    )
  }
  const limit = args.limit ?? webSearchDefaultLimit
  const request = searchRequest(settings, key, { query: args.query, limit, recency: args.recency })
  yield* Effect.annotateCurrentSpan({ provider: settings.provider })
  const client = yield* SearchHttpClient
  const where = new URL(request.url).origin
  const ask = Effect.gen(function*() {
    const response = yield* client.execute(request)
    const body = yield* response.text
    return { status: response.status, contentType: response.headers["content-type"] ?? "", body }
  }).pipe(
    Effect.mapError((error) =>
      toolFailure("NETWORK_ERROR", `could not reach ${providerName(settings.provider)} at ${where}: ${error.message}`, true)
    ),
    Effect.timeoutFail({
      duration: Duration.millis(webSearchTimeoutMs),
      onTimeout: () =>
        toolFailure("TIMEOUT", `${providerName(settings.provider)} at ${where} did not answer within ${webSearchTimeoutMs / 1000} s`, true)
    })
  )
  const answer = yield* ask
  if (answer.status < 200 || answer.status >= 300) {
    return yield* statusFailure(settings.provider, answer.status, answer.body, keyEnv)
  }
  const json = parseJsonText(answer.body)
  if (Either.isLeft(json)) return yield* notJsonFailure(settings.provider, where, answer.contentType, answer.body)
  const decoded = decodeAnswer(settings.provider, json.right)
  if (Either.isLeft(decoded)) {
    return yield* toolFailure(
      "NETWORK_ERROR",
      `${providerName(settings.provider)} at ${where} answered JSON kern does not understand (${decoded.left.message.split("\n").slice(0, 3).join(" ")})`
    )
  }
  const results = decoded.right.slice(0, limit)
  return {
    provider: settings.provider,
    query: args.query,
    results,
    text: resultsText(args.query, results)
  } satisfies WebSearchOutput
})
