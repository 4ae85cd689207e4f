import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Layer, TestClock } from "effect"
import { AgentConfig, type LoadedConfig } from "../../src/config/AgentConfig.js"
import { decodeConfigFile } from "../../src/config/decode.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { agentPaths } from "../../src/config/paths.js"
import * as SearchHttpClient from "../../src/tools/webSearch/SearchHttpClient.js"
import { noSearchProvider, webSearch, webSearchTimeoutMs } from "../../src/tools/webSearch/webSearch.js"
import { fakeSearch } from "../support/fakeSearch.js"
import { makeTempDir } from "../support/tempDir.js"

const braveKey = "BSA-test-key-0123456789"
const tavilyKey = "tvly-test-key-0123456789"

const loaded = (file: Record<string, unknown>, env: Record<string, string> = {}): LoadedConfig => {
  const decoded = decodeConfigFile("config.json", file, "agent")
  if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
  return { paths: agentPaths(makeTempDir()), fileExists: true, config: decoded.right.config, env, secretKeys: [], warnings: [] }
}

/** web_search with `webSearch` configured as given and `env` as the agent's environment. */
const search = (
  webSearchConfig: Record<string, unknown> | undefined,
  args: Parameters<typeof webSearch>[0],
  env: Record<string, string> = {}
) =>
  webSearch(args).pipe(
    Effect.provide(Layer.merge(
      Layer.succeed(AgentConfig, loaded(webSearchConfig === undefined ? {} : { webSearch: webSearchConfig }, env)),
      SearchHttpClient.layer
    ))
  )

describe("web_search: each provider's real request and answer", () => {
  it.scoped("SearXNG: GET /search?q&format=json&time_range; results cut to the limit", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch()
      const out = yield* search({ provider: "searxng", url: fake.origin }, { query: "effect ts layers", limit: 3, recency: "week" })
      const [request] = fake.requests
      expect(request).toMatchObject({ method: "GET", path: "/search" })
      expect(request!.params).toEqual({ q: "effect ts layers", format: "json", time_range: "week" })
      assert.strictEqual(out.provider, "searxng")
      assert.deepStrictEqual(out.results.map((r) => r.title), [1, 2, 3].map((i) => `Result ${i} for effect ts layers`))
      assert.strictEqual(out.results[0]!.url, "https://example.com/1?q=effect%20ts%20layers")
      assert.strictEqual(out.results[0]!.snippet, "Snippet 1 & more about effect ts layers")
      assert.include(out.text, "1. Result 1 for effect ts layers\n   https://example.com/1")
    }))

  it.scoped("Brave: GET /res/v1/web/search with X-Subscription-Token, count and freshness; markup leaves the snippets", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch({ key: braveKey })
      const out = yield* search({ provider: "brave", url: fake.origin }, { query: "kern agent", limit: 4, recency: "day" }, {
        BRAVE_API_KEY: braveKey
      })
      const [request] = fake.requests
      expect(request).toMatchObject({ method: "GET", path: "/res/v1/web/search" })
      expect(request!.params).toEqual({ q: "kern agent", count: "4", freshness: "pd" })
      assert.strictEqual(request!.headers["x-subscription-token"], braveKey)
      assert.strictEqual(out.results.length, 4)
      assert.strictEqual(out.results[1]!.snippet, "Snippet 2 & more about kern agent")
      assert.notInclude(out.text, "<strong>")
    }))

  it.scoped("Tavily: POST /search, JSON body, key as a Bearer token (never in the body); apiKeyEnv names the variable", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch({ key: tavilyKey })
      const out = yield* search(
        { provider: "tavily", url: fake.origin, apiKeyEnv: "MY_TAVILY" },
        { query: "sqlite wal", recency: "month" },
        { MY_TAVILY: tavilyKey }
      )
      const [request] = fake.requests
      expect(request).toMatchObject({ method: "POST", path: "/search" })
      assert.strictEqual(request!.headers["authorization"], `Bearer ${tavilyKey}`)
      assert.strictEqual(request!.headers["content-type"], "application/json")
      expect(request!.body).toEqual({ query: "sqlite wal", max_results: 5, search_depth: "basic", time_range: "month" })
      assert.strictEqual(out.results.length, 5)
      assert.strictEqual(out.results[0]!.title, "Result 1 for sqlite wal")
    }))

  it.scoped("no results is an answer, not a failure (Brave leaves out `web`)", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch()
      fake.script({ status: 200, body: JSON.stringify({ type: "search", query: { original: "zzqx" } }) })
      const out = yield* search({ provider: "brave", url: fake.origin }, { query: "zzqx" }, { BRAVE_API_KEY: braveKey })
      assert.deepStrictEqual(out.results, [])
      assert.strictEqual(out.text, "no results for \"zzqx\"")
    }))
})

describe("web_search: failures become the kernel's error codes with what to do", () => {
  const brave = (origin: string) => ({ provider: "brave", url: origin })
  const env = { BRAVE_API_KEY: braveKey }

  it.scoped("no provider configured", () =>
    Effect.gen(function*() {
      const error = yield* search(undefined, { query: "x" }).pipe(Effect.flip)
      assert.strictEqual(error.code, "VALIDATION_ERROR")
      assert.strictEqual(error.message, noSearchProvider)
      assert.include(error.message, "no search provider configured")
    }))

  it.scoped("no key in the environment names the variable to set; nothing is sent", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch()
      const error = yield* search({ provider: "tavily", url: fake.origin }, { query: "x" }).pipe(Effect.flip)
      assert.strictEqual(error.code, "VALIDATION_ERROR")
      assert.include(error.message, "set TAVILY_API_KEY in .kern/.env")
      assert.strictEqual(fake.requests.length, 0)
    }))

  it.scoped("a refused key (401) is PERMISSION_DENIED naming the variable, with the provider's words", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch({ key: braveKey })
      const error = yield* search(brave(fake.origin), { query: "x" }, { BRAVE_API_KEY: "BSA-wrong-key-000000" }).pipe(Effect.flip)
      assert.strictEqual(error.code, "PERMISSION_DENIED")
      assert.include(error.message, "Brave Search answered 401")
      assert.include(error.message, "check BRAVE_API_KEY in .kern/.env")
      assert.include(error.message, "subscription token is invalid")
      const tavily = yield* fakeSearch({ key: tavilyKey })
      const refused = yield* search({ provider: "tavily", url: tavily.origin }, { query: "x" }, { TAVILY_API_KEY: "tvly-wrong-0000000" })
        .pipe(Effect.flip)
      assert.strictEqual(refused.code, "PERMISSION_DENIED")
      assert.include(refused.message, "missing or invalid API key")
    }))

  it.scoped("429 is RATE_LIMITED and retryable; 5xx is a retryable NETWORK_ERROR", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch()
      fake.script(
        { status: 429, body: JSON.stringify({ type: "ErrorResponse", error: { code: "RATE_LIMITED", detail: "Request rate limit exceeded" } }) },
        { status: 502, body: "<html>bad gateway</html>", contentType: "text/html" }
      )
      const limited = yield* search(brave(fake.origin), { query: "x" }, env).pipe(Effect.flip)
      assert.strictEqual(limited.code, "RATE_LIMITED")
      assert.isTrue(limited.retryable)
      assert.include(limited.message, "wait before searching again")
      const down = yield* search(brave(fake.origin), { query: "x" }, env).pipe(Effect.flip)
      assert.strictEqual(down.code, "NETWORK_ERROR")
      assert.isTrue(down.retryable)
    }))

  it.scoped("an HTML page instead of JSON says to check the url; a SearXNG without json (403) says what to enable", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch()
      fake.script({ status: 200, body: "<!doctype html><html><body>Login</body></html>", contentType: "text/html" })
      const html = yield* search({ provider: "searxng", url: fake.origin }, { query: "x" }).pipe(Effect.flip)
      assert.strictEqual(html.code, "NETWORK_ERROR")
      assert.include(html.message, "answered an HTML page, not JSON")
      assert.include(html.message, "webSearch.url")
      fake.script({ status: 403, body: "<html><body>403 Forbidden</body></html>", contentType: "text/html" })
      const forbidden = yield* search({ provider: "searxng", url: fake.origin }, { query: "x" }).pipe(Effect.flip)
      assert.strictEqual(forbidden.code, "PERMISSION_DENIED")
      assert.include(forbidden.message, "search.formats")
      fake.script({ status: 200, body: JSON.stringify({ hits: [] }) })
      const shape = yield* search({ provider: "searxng", url: fake.origin }, { query: "x" }).pipe(Effect.flip)
      assert.strictEqual(shape.code, "NETWORK_ERROR")
      assert.include(shape.message, "JSON kern does not understand")
    }))

  it.scoped("a provider that never answers is a retryable TIMEOUT", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch()
      fake.script("hang")
      const fiber = yield* search({ provider: "searxng", url: fake.origin }, { query: "x" }).pipe(Effect.flip, Effect.fork)
      yield* Effect.promise(() => fake.requestsSeen(1))
      yield* TestClock.adjust(webSearchTimeoutMs)
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error.code, "TIMEOUT")
      assert.isTrue(error.retryable)
      assert.include(error.message, "did not answer within 20 s")
    }))

  it.scoped("nothing listening is a retryable NETWORK_ERROR naming the address", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSearch()
      const closed = fake.origin
      yield* Effect.promise(() => new Promise<void>((resolve) => fake.server.close(() => resolve())))
      const error = yield* search({ provider: "searxng", url: closed }, { query: "x" }).pipe(Effect.flip)
      assert.strictEqual(error.code, "NETWORK_ERROR")
      assert.isTrue(error.retryable)
      assert.include(error.message, `could not reach SearXNG at ${closed}`)
    }))
})

describe("webSearch config", () => {
  it("searxng needs a url; an unknown provider names what is accepted", () => {
    const noUrl = decodeConfigFile("config.json", { webSearch: { provider: "searxng" } }, "agent")
    assert.isTrue(Either.isLeft(noUrl))
    if (Either.isLeft(noUrl)) {
      assert.strictEqual(noUrl.left.key, "webSearch")
      assert.include(noUrl.left.expected, "searxng needs url")
    }
    const google = decodeConfigFile("config.json", { webSearch: { provider: "google" } }, "agent")
    assert.isTrue(Either.isLeft(google))
    if (Either.isLeft(google)) assert.include(google.left.expected, "\"searxng\" | \"brave\" | \"tavily\"")
  })

  it("the search key is a known secret, by its default name or apiKeyEnv, wherever it comes from", () => {
    const brave = KnownSecrets.fromConfig(loaded({ webSearch: { provider: "brave" } }, { BRAVE_API_KEY: braveKey }))
    expect(brave.secrets).toContainEqual({ name: "BRAVE_API_KEY", value: braveKey, origin: "agent" })
    const named = KnownSecrets.fromConfig(loaded({ webSearch: { provider: "tavily", apiKeyEnv: "SEARCH_SECRET_X" } }, {
      SEARCH_SECRET_X: tavilyKey
    }))
    expect(named.secrets).toContainEqual({ name: "SEARCH_SECRET_X", value: tavilyKey, origin: "agent" })
  })
})
