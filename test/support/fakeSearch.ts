import { Effect } from "effect"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A fake search service on 127.0.0.1 speaking the three providers' real formats, recording every request:
 * - SearXNG: `GET /search?q=…&format=json[&time_range=…]` → `{ query, number_of_results, results: [{ url, title,
 *   content, engine }] }`; any format but json is refused with 403 and an HTML page, as an instance without it does.
 * - Brave: `GET /res/v1/web/search?q=…&count=…[&freshness=…]` with `X-Subscription-Token` → `{ type: "search", web:
 *   { results: [{ title, url, description }] } }` (descriptions carry `<strong>` markup); a wrong token is 401 with
 *   Brave's `ErrorResponse`.
 * - Tavily: `POST /search` with a JSON body and `Authorization: Bearer` → `{ query, results: [{ title, url, content,
 *   score }], response_time }`; a wrong key is 401 with Tavily's `{ detail: { error } }`.
 * A test scripts the next answers (`script`): a status, body and content type, or `"hang"` (never answered).
 */

export interface RecordedSearch {
  readonly method: string
  readonly path: string
  readonly params: Readonly<Record<string, string>>
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: unknown
}

export type ScriptedAnswer =
  | { readonly status: number; readonly body: string; readonly contentType?: string }
  | "hang"

export interface FakeSearch {
  readonly origin: string
  readonly requests: ReadonlyArray<RecordedSearch>
  /** Answers the next requests with these, in order, before the providers' own answers resume. */
  readonly script: (...answers: ReadonlyArray<ScriptedAnswer>) => void
  /** Resolves when `count` requests have arrived. */
  readonly requestsSeen: (count: number) => Promise<void>
}

/** The results every provider finds: `count` pages about the query. */
export const fakeHits = (query: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    title: `Result ${i + 1} for ${query}`,
    url: `https://example.com/${i + 1}?q=${encodeURIComponent(query)}`,
    text: `Snippet ${i + 1} & more about ${query}`
  }))

const json = (response: NodeHttp.ServerResponse, status: number, body: unknown) =>
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))

const readBody = (request: NodeHttp.IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
  })

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const fakeSearch = (options: { readonly key?: string; readonly hits?: number } = {}) =>
  Effect.acquireRelease(
    Effect.async<FakeSearch & { readonly server: NodeHttp.Server }>((resume) => {
      const requests: Array<RecordedSearch> = []
      const scripted: Array<ScriptedAnswer> = []
      const waiters: Array<{ readonly count: number; readonly resolve: () => void }> = []
      const hits = options.hits ?? 8
      const keyOk = (given: string | undefined) => options.key === undefined || given === options.key

      const provider = (recorded: RecordedSearch, response: NodeHttp.ServerResponse) => {
        const query = recorded.method === "POST"
          ? String((recorded.body as { query?: unknown }).query ?? "")
          : recorded.params["q"] ?? ""
        if (recorded.method === "GET" && recorded.path === "/search") {
          if (recorded.params["format"] !== "json") {
            return response.writeHead(403, { "content-type": "text/html" }).end("<html><body><h1>403 Forbidden</h1></body></html>")
          }
          return json(response, 200, {
            query,
            number_of_results: hits,
            results: fakeHits(query, hits).map((hit) => ({ url: hit.url, title: hit.title, content: hit.text, engine: "fake" })),
            answers: [],
            suggestions: []
          })
        }
        if (recorded.method === "GET" && recorded.path === "/res/v1/web/search") {
          if (!keyOk(recorded.headers["x-subscription-token"] as string | undefined)) {
            return json(response, 401, {
              type: "ErrorResponse",
              error: { id: "fake", status: 401, code: "SUBSCRIPTION_TOKEN_INVALID", detail: "The provided subscription token is invalid." },
              time: 0
            })
          }
          const count = Number(recorded.params["count"] ?? 20)
          return json(response, 200, {
            type: "search",
            query: { original: query },
            web: {
              type: "search",
              results: fakeHits(query, Math.min(count, hits)).map((hit) => ({
                title: hit.title,
                url: hit.url,
                description: hit.text.replace(query, `<strong>${query}</strong>`).replace("&", "&amp;")
              }))
            }
          })
        }
        if (recorded.method === "POST" && recorded.path === "/search") {
          const bearer = /^Bearer (.*)$/.exec(recorded.headers["authorization"] ?? "")?.[1]
          if (!keyOk(bearer)) return json(response, 401, { detail: { error: "Unauthorized: missing or invalid API key." } })
          const max = Number((recorded.body as { max_results?: unknown }).max_results ?? 5)
          return json(response, 200, {
            query,
            answer: null,
            images: [],
            results: fakeHits(query, Math.min(max, hits)).map((hit, i) => ({
              title: hit.title,
              url: hit.url,
              content: hit.text,
              score: 1 - i / 100,
              raw_content: null
            })),
            response_time: 0.5
          })
        }
        response.writeHead(404, { "content-type": "text/plain" }).end("no such endpoint")
      }

      const server = NodeHttp.createServer((request, response) => {
        void readBody(request).then((text) => {
          const url = new URL(request.url ?? "/", "http://x")
          const recorded: RecordedSearch = {
            method: request.method ?? "GET",
            path: url.pathname,
            params: Object.fromEntries(url.searchParams),
            headers: request.headers,
            body: parsed(text)
          }
          requests.push(recorded)
          for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
            waiters.splice(waiters.indexOf(waiter), 1)
            waiter.resolve()
          }
          const next = scripted.shift()
          if (next === "hang") return
          if (next !== undefined) {
            return response.writeHead(next.status, { "content-type": next.contentType ?? "application/json" }).end(next.body)
          }
          provider(recorded, response)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          server,
          origin: `http://127.0.0.1:${port}`,
          requests,
          script: (...answers) => void scripted.push(...answers),
          requestsSeen: (count) =>
            requests.length >= count ? Promise.resolve() : new Promise<void>((resolve) => void waiters.push({ count, resolve }))
        }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
