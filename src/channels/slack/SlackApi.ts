import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Clock, Duration, Effect, Either, Schema } from "effect"
import { parseJsonWith } from "../../config/json.js"
import { parseRetryAfter } from "../../model/ProviderError.js"
import { type Downloaded, DownloadFailure, downloadCapped } from "../download.js"
import { ApiAnswer } from "./wire.js"

/** Answers that mean the token is wrong or dead: retrying cannot help, the channel stops. */
export const fatalErrors: ReadonlySet<string> = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "not_allowed_token_type"
])

export class SlackApiError extends Schema.TaggedError<SlackApiError>()("SlackApiError", {
  method: Schema.String,
  /** Slack's error code (`invalid_auth`, `channel_not_found`), or `network`, `http_<status>`, `bad_answer`. */
  error: Schema.String,
  message: Schema.String
}) {
  get fatal(): boolean {
    return fatalErrors.has(this.error)
  }
}

/** The Web API's root unless SLACK_API_URL names another (a test server). */
export const defaultApiUrl = "https://slack.com/api/"

export interface SlackApiSettings {
  /** The Web API root, ending in `/` (`https://slack.com/api/`). */
  readonly apiUrl: string
  readonly botToken: string
  readonly appToken: string
}

/** A call Slack does not answer in this long fails (the rate-limit waits are not counted). */
const callTimeout = Duration.seconds(30)

/** Rate-limited answers are waited out this many times before the call fails. */
const maxRateLimitWaits = 5

/** A download's Retry-After is honoured up to this long: a file is not worth holding the event for more. */
const maxDownloadWaitSeconds = 60

/** Slack's Web API over the ambient HttpClient: JSON bodies, bearer tokens, `Retry-After` honoured on 429. */
export const make = (settings: SlackApiSettings) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const root = settings.apiUrl.endsWith("/") ? settings.apiUrl : `${settings.apiUrl}/`

    const failure = (method: string, error: string, detail: string) =>
      new SlackApiError({ method, error, message: `Slack ${method} failed: ${detail}` })

    const answer = <A, I>(method: string, schema: Schema.Schema<A, I>) =>
      (response: HttpClientResponse.HttpClientResponse) =>
        Effect.gen(function*() {
          const text = yield* response.text.pipe(Effect.mapError((error) => failure(method, "network", error.message)))
          if (response.status < 200 || response.status >= 300) {
            return yield* failure(method, `http_${response.status}`, `HTTP ${response.status} ${text.slice(0, 200)}`)
          }
          const status = yield* Schema.decodeUnknown(parseJsonWith(ApiAnswer))(text).pipe(
            Effect.mapError((error) => failure(method, "bad_answer", `not a Web API answer: ${error.message}`))
          )
          if (!status.ok) {
            const code = status.error ?? "unknown_error"
            return yield* failure(method, code, fatalErrors.has(code) ? `${code} (check the Slack token)` : code)
          }
          return yield* Schema.decodeUnknown(parseJsonWith(schema))(text).pipe(
            Effect.mapError((error) => failure(method, "bad_answer", error.message))
          )
        })

    /** One call; a 429 sleeps for its `Retry-After` (on the Clock) and tries again. */
    const call = <A, I>(
      method: string,
      body: Record<string, unknown>,
      schema: Schema.Schema<A, I>,
      token: string = settings.botToken
    ): Effect.Effect<A, SlackApiError> =>
      send(method, HttpClientRequest.bodyUnsafeJson(body), schema, token)

    /** A call with a form body: the methods that take no JSON (files.getUploadURLExternal). */
    const callForm = <A, I>(method: string, fields: Record<string, string>, schema: Schema.Schema<A, I>) =>
      send(method, HttpClientRequest.bodyUrlParams(fields), schema, settings.botToken)

    const send = <A, I>(
      method: string,
      withBody: (request: HttpClientRequest.HttpClientRequest) => HttpClientRequest.HttpClientRequest,
      schema: Schema.Schema<A, I>,
      token: string
    ): Effect.Effect<A, SlackApiError> => {
      const request = HttpClientRequest.post(`${root}${method}`).pipe(HttpClientRequest.bearerToken(token), withBody)
      /** One exchange: the decoded answer, or the seconds a 429 asks us to wait. */
      const exchange: Effect.Effect<Either.Either<A, number>, SlackApiError> = http.execute(request).pipe(
        Effect.mapError((error) => failure(method, "network", error.message)),
        Effect.flatMap((response): Effect.Effect<Either.Either<A, number>, SlackApiError> =>
          response.status === 429
            ? Effect.map(Clock.currentTimeMillis, (now) => Either.left(parseRetryAfter(response.headers["retry-after"], now) ?? 1))
            : Effect.map(answer(method, schema)(response), Either.right)
        ),
        Effect.scoped,
        Effect.timeoutFail({ duration: callTimeout, onTimeout: () => failure(method, "network", `no answer in ${Duration.format(callTimeout)}`) })
      )
      const attempt = (waits: number): Effect.Effect<A, SlackApiError> =>
        Effect.flatMap(exchange, (result) =>
          Either.match(result, {
            onRight: (value) => Effect.succeed(value),
            onLeft: (seconds) =>
              waits >= maxRateLimitWaits
                ? Effect.fail(failure(method, "ratelimited", `still rate-limited after ${waits} waits`))
                : Effect.logWarning(`kern: Slack rate-limited ${method}; retrying in ${seconds} s`).pipe(
                  Effect.zipRight(Effect.sleep(Duration.seconds(seconds))),
                  Effect.zipRight(attempt(waits + 1))
                )
          }))
      return attempt(0).pipe(Effect.withSpan(`kern.slack.${method}`))
    }

    /**
     * A file's `url_private_download`, with the bot token: only on Slack's own hosts (or the configured API's, a test
     * server's), so an odd URL in an event never receives the token.
     */
    const download = (url: string, maxBytes: number): Effect.Effect<Downloaded, DownloadFailure> =>
      Effect.gen(function*() {
        const parsed = yield* Effect.try(() => new URL(url)).pipe(
          Effect.mapError(() => new DownloadFailure({ reason: "not-the-file", message: "the file's download URL is not a URL" }))
        )
        // Slack's hosts over https only, or exactly the API root's origin (scheme, host and port): `http://slack.com`
        // would carry the token in the clear.
        const slackHost = parsed.protocol === "https:" && (parsed.hostname === "slack.com" || parsed.hostname.endsWith(".slack.com"))
        if (!slackHost && parsed.origin !== new URL(root).origin) {
          return yield* new DownloadFailure({ reason: "not-the-file", message: `the file's download URL is not on Slack (${parsed.host})` })
        }
        const once = downloadCapped(http, HttpClientRequest.get(parsed.href).pipe(HttpClientRequest.bearerToken(settings.botToken)), maxBytes).pipe(
          Effect.timeoutFail({ duration: Duration.minutes(2), onTimeout: () => new DownloadFailure({ reason: "network", message: "no end in 2m" }) })
        )
        // A 429 is waited out for its Retry-After (on the Clock), as a Web API call's is; then the last one is the answer.
        const attempt = (waits: number): Effect.Effect<Downloaded, DownloadFailure> =>
          Effect.catchIf(once, (error) => error.status === 429 && waits < maxRateLimitWaits, (error) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const seconds = Math.min(parseRetryAfter(error.retryAfter, now) ?? 1, maxDownloadWaitSeconds)
              return Effect.logWarning(`kern: Slack rate-limited a file download; retrying in ${seconds} s`).pipe(
                Effect.zipRight(Effect.sleep(Duration.seconds(seconds))),
                Effect.zipRight(attempt(waits + 1))
              )
            }))
        return yield* attempt(0)
      }).pipe(Effect.withSpan("kern.slack.download"))

    /** The bytes of an upload, to the URL files.getUploadURLExternal gave (it carries its own authorization). */
    const upload = (url: string, bytes: Uint8Array, name: string) =>
      http.execute(
        HttpClientRequest.post(url).pipe(HttpClientRequest.bodyUint8Array(bytes, "application/octet-stream"))
      ).pipe(
        Effect.flatMap((response) =>
          response.status >= 200 && response.status < 300
            ? Effect.void
            : Effect.fail(failure("upload", `http_${response.status}`, `the upload of ${name} answered HTTP ${response.status}`))
        ),
        Effect.mapError((error) => error._tag === "SlackApiError" ? error : failure("upload", "network", error.message)),
        Effect.scoped,
        Effect.timeoutFail({ duration: Duration.minutes(2), onTimeout: () => failure("upload", "network", "no answer in 2m") }),
        Effect.withSpan("kern.slack.upload")
      )

    return { call, callForm, download, upload, appToken: settings.appToken } as const
  })

export type SlackApi = Effect.Effect.Success<ReturnType<typeof make>>
