import { HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Duration, Effect, Either, Schema, Stream } from "effect"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { refusal } from "./addressPolicy.js"
import { findAddressRefusal, GuardedHttpClient } from "./guardedHttpClient.js"
import { HostResolver } from "./HostResolver.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { Workspace } from "./Workspace.js"

export const webfetchMaxDownloadBytes = 5 * 1024 * 1024
export const webfetchMaxChars = 50_000
export const webfetchMaxRedirects = 5

export const WebfetchArgs = Schema.Struct({
  url: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "http(s) URL to GET" }),
  timeout: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(100, 60_000)).annotations({ description: "Milliseconds for the whole fetch (default 30000)" }),
    { default: () => 30_000 }
  ),
  raw: Schema.optional(Schema.Boolean.annotations({ description: "Return HTML as it is instead of converting it to Markdown" }))
})
export type WebfetchArgs = typeof WebfetchArgs.Type

export const webfetchTool: ToolMetadata = {
  toolId: "webfetch",
  name: "WebFetch",
  description: "Fetch a URL (GET) and return the body: HTML as Markdown, JSON and text as they are. Results over " +
    "50000 characters are truncated. Private and local network addresses are refused.",
  safetyClass: "NETWORK",
  idempotent: true,
  timeoutMs: 60_000,
  scope: "read"
}

export interface WebfetchOutput {
  readonly url: string
  readonly status: number
  readonly contentType: string
  readonly bytes: number
  readonly truncated: boolean
  readonly text: string
}

const parseUrl = (raw: string, base?: string): Either.Either<URL, ToolFailure> =>
  Either.try({
    try: () => new URL(raw, base),
    catch: () => toolFailure("VALIDATION_ERROR", `${JSON.stringify(raw.slice(0, 200))} is not a valid URL`)
  })

/** Refuses schemes other than http(s) and hosts that resolve to a local, private, link-local or metadata address. */
const checkDestination = (url: URL) =>
  Effect.gen(function*() {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return yield* toolFailure("VALIDATION_ERROR", `only http and https URLs can be fetched, not ${url.protocol}`)
    }
    const workspace = yield* Workspace
    const resolver = yield* HostResolver
    const host = url.hostname.replace(/^\[|\]$/g, "")
    const addresses = yield* resolver.resolve(host)
    const refused = refusal(url.host, addresses, workspace.allowPrivateHosts)
    if (refused !== undefined) return yield* toolFailure("PERMISSION_DENIED", refused)
  })

const statusFailure = (status: number, url: string): ToolFailure =>
  status === 404 || status === 410
    ? toolFailure("NOT_FOUND", `${url} answered ${status}: not found`)
    : status === 429
    ? toolFailure("RATE_LIMITED", `${url} answered 429: too many requests; wait before fetching again`, true)
    : status === 401 || status === 403
    ? toolFailure("PERMISSION_DENIED", `${url} answered ${status}: access denied`)
    : status >= 500
    ? toolFailure("NETWORK_ERROR", `${url} answered ${status}: server error`, true)
    : toolFailure("VALIDATION_ERROR", `${url} answered ${status}`)

/** Reads at most `limit` bytes of the body, then stops the download. */
const readCapped = (response: HttpClientResponse.HttpClientResponse, limit: number) =>
  response.stream.pipe(
    Stream.runFoldWhile(
      { chunks: [] as Array<Uint8Array>, bytes: 0 },
      (acc) => acc.bytes <= limit,
      (acc, chunk) => ({ chunks: [...acc.chunks, chunk], bytes: acc.bytes + chunk.byteLength })
    ),
    Effect.map(({ bytes, chunks }) => {
      const body = Buffer.concat(chunks)
      return { body: body.subarray(0, limit), bytes, overLimit: bytes > limit }
    })
  )

const decode = (body: Uint8Array, contentType: string): string => {
  const charset = /charset=([^;\s]+)/i.exec(contentType)?.[1]?.replace(/"/g, "")
  const decoded = Either.try(() => new TextDecoder(charset ?? "utf-8").decode(body))
  return Either.isRight(decoded) ? decoded.right : new TextDecoder("utf-8").decode(body)
}

const isTextual = (contentType: string) =>
  contentType === "" || /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json|rss\+xml|atom\+xml)|[^;]*\+json|[^;]*\+xml)/i.test(contentType)

/** HTML as Markdown; the converter is loaded by the first page that needs it, not by every kern that starts. */
const htmlToMarkdown = (html: string) =>
  Effect.map(Effect.promise(() => import("node-html-markdown")), ({ NodeHtmlMarkdown }) => NodeHtmlMarkdown.translate(html))

const render = (body: Uint8Array, contentType: string, raw: boolean): Effect.Effect<string> => {
  if (!isTextual(contentType)) return Effect.succeed(`[binary content (${contentType}), ${body.byteLength} bytes, not shown]`)
  const text = decode(body, contentType)
  const html = /html/i.test(contentType) || (contentType === "" && /^\s*<(!doctype html|html)/i.test(text))
  return html && !raw ? htmlToMarkdown(text) : Effect.succeed(text)
}

/** GET a public URL, following up to 5 redirects (each hop checked), the body capped at 5 MB and 50,000 characters. */
export const webfetch = Effect.fn("kern.tools.webfetch")(function*(args: WebfetchArgs) {
  const client = yield* GuardedHttpClient
  const fetchAll = Effect.gen(function*() {
    let url = yield* parseUrl(args.url)
    for (let hop = 0; ; hop++) {
      yield* checkDestination(url)
      const response = yield* client.execute(
        HttpClientRequest.get(url).pipe(
          HttpClientRequest.setHeaders({ "user-agent": "kern-webfetch", accept: "text/html,application/json,text/plain;q=0.9,*/*;q=0.5" })
        )
      ).pipe(Effect.mapError((error) => {
        const refused = findAddressRefusal(error)
        return refused === undefined
          ? toolFailure("NETWORK_ERROR", `could not fetch ${url.href}: ${error.message}`, true)
          : toolFailure("PERMISSION_DENIED", refused.message)
      }))
      const location = response.headers["location"]
      if (response.status >= 300 && response.status < 400 && location !== undefined) {
        if (hop >= webfetchMaxRedirects) {
          return yield* toolFailure("NETWORK_ERROR", `too many redirects (more than ${webfetchMaxRedirects}) starting at ${args.url}`)
        }
        url = yield* parseUrl(location, url.href)
        continue
      }
      if (response.status >= 400) return yield* statusFailure(response.status, url.href)
      const contentType = response.headers["content-type"] ?? ""
      const { body, bytes, overLimit } = yield* readCapped(response, webfetchMaxDownloadBytes).pipe(
        Effect.mapError((error) => toolFailure("NETWORK_ERROR", `could not read the body of ${url.href}: ${error.message}`, true))
      )
      const rendered = yield* render(body, contentType, args.raw === true)
      const cut = rendered.length > webfetchMaxChars
      const notes = [
        ...(overLimit ? [`[download stopped at ${webfetchMaxDownloadBytes} bytes]`] : []),
        ...(cut ? [`[truncated: showing ${webfetchMaxChars} of ${rendered.length} characters]`] : [])
      ]
      const text = [cut ? rendered.slice(0, webfetchMaxChars) : rendered, ...notes].join("\n\n")
      return { url: url.href, status: response.status, contentType, bytes, truncated: cut || overLimit, text } satisfies WebfetchOutput
    }
  })
  return yield* fetchAll.pipe(
    Effect.timeoutFail({
      duration: Duration.millis(args.timeout),
      onTimeout: () => toolFailure("TIMEOUT", `fetching ${args.url} took longer than ${args.timeout} ms`, true)
    })
  )
})
