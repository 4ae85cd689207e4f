import { HttpClientRequest } from "@effect/platform"
import { Either, type ParseResult, Schema } from "effect"
import { defaultSearchUrl, type SearchProvider, type WebSearchConfig } from "../../config/webSearch.js"

/** How far back results may go: the providers' common ground. */
export const Recency = Schema.Literal("day", "week", "month", "year")
export type Recency = typeof Recency.Type

export interface SearchQuery {
  readonly query: string
  readonly limit: number
  readonly recency?: Recency | undefined
}

export interface SearchResult {
  readonly title: string
  readonly url: string
  readonly snippet: string
}

/** The provider's base URL with `path` under it (a base with a path of its own, a proxy's, keeps it). */
const endpoint = (base: string, path: string): string => {
  const url = new URL(base)
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${path}`
  return url.href
}

const braveFreshness: Record<Recency, string> = { day: "pd", week: "pw", month: "pm", year: "py" }

/**
 * Each provider's real request. SearXNG: `GET /search?q&format=json&time_range` (JSON must be enabled in the
 * instance's settings.yml). Brave: `GET /res/v1/web/search?q&count&freshness` with `X-Subscription-Token`. Tavily:
 * `POST /search` with a JSON body and `Authorization: Bearer`.
 */
export const searchRequest = (
  config: WebSearchConfig,
  key: string | undefined,
  search: SearchQuery
): HttpClientRequest.HttpClientRequest => {
  const accept = HttpClientRequest.setHeaders({ accept: "application/json", "user-agent": "kern-web-search" })
  switch (config.provider) {
    case "searxng": {
      const request = HttpClientRequest.get(endpoint(config.url ?? "", "/search")).pipe(
        HttpClientRequest.setUrlParams({
          q: search.query,
          format: "json",
          ...(search.recency === undefined ? {} : { time_range: search.recency })
        }),
        accept
      )
      // An instance behind a proxy that wants a key gets it as a bearer token.
      return key === undefined ? request : HttpClientRequest.bearerToken(request, key)
    }
    case "brave":
      return HttpClientRequest.get(endpoint(config.url ?? defaultSearchUrl.brave, "/res/v1/web/search")).pipe(
        HttpClientRequest.setUrlParams({
          q: search.query,
          count: String(search.limit),
          ...(search.recency === undefined ? {} : { freshness: braveFreshness[search.recency] })
        }),
        accept,
        HttpClientRequest.setHeader("x-subscription-token", key ?? "")
      )
    case "tavily":
      return HttpClientRequest.post(endpoint(config.url ?? defaultSearchUrl.tavily, "/search")).pipe(
        HttpClientRequest.bodyUnsafeJson({
          query: search.query,
          max_results: search.limit,
          search_depth: "basic",
          ...(search.recency === undefined ? {} : { time_range: search.recency })
        }),
        accept,
        HttpClientRequest.bearerToken(key ?? "")
      )
  }
}

const Title = Schema.optionalWith(Schema.String, { default: () => "" })
const Snippet = Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => "" })

const SearxngAnswer = Schema.Struct({
  results: Schema.Array(Schema.Struct({ title: Title, url: Schema.String, content: Snippet }))
})
/** Brave leaves `web` out when nothing was found. */
const BraveAnswer = Schema.Struct({
  web: Schema.optional(Schema.Struct({
    results: Schema.Array(Schema.Struct({ title: Title, url: Schema.String, description: Snippet }))
  }))
})
const TavilyAnswer = Schema.Struct({
  results: Schema.Array(Schema.Struct({ title: Title, url: Schema.String, content: Snippet }))
})

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: "\"", "#39": "'", "#x27": "'", apos: "'", nbsp: " " }

/** Snippets come with markup (Brave's `<strong>`) and entities: plain text, one line, at most `max` characters. */
export const plainSnippet = (text: string, max = 400): string => {
  const plain = text
    .replace(/<[^>]*>/g, "")
    .replace(/&(amp|lt|gt|quot|#39|#x27|apos|nbsp);/g, (_, name: string) => entities[name] ?? "")
    .replace(/\s+/g, " ")
    .trim()
  return plain.length > max ? `${plain.slice(0, max - 1)}…` : plain
}

const normalized = (title: string, url: string, snippet: string | null): SearchResult => ({
  title: plainSnippet(title, 200),
  url,
  snippet: plainSnippet(snippet ?? "")
})

/** Decodes a provider's JSON answer into results; a decode failure names what was missing. */
export const decodeAnswer = (
  provider: SearchProvider,
  body: unknown
): Either.Either<ReadonlyArray<SearchResult>, ParseResult.ParseError> => {
  switch (provider) {
    case "searxng":
      return Either.map(
        Schema.decodeUnknownEither(SearxngAnswer)(body),
        (answer) => answer.results.map((r) => normalized(r.title, r.url, r.content))
      )
    case "brave":
      return Either.map(
        Schema.decodeUnknownEither(BraveAnswer)(body),
        (answer) => (answer.web?.results ?? []).map((r) => normalized(r.title, r.url, r.description))
      )
    case "tavily":
      return Either.map(
        Schema.decodeUnknownEither(TavilyAnswer)(body),
        (answer) => answer.results.map((r) => normalized(r.title, r.url, r.content))
      )
  }
}
