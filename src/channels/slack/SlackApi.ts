import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Clock, Duration, Effect, Either, Schema } from "effect"
import { parseJsonWith } from "../../config/json.js"
import { parseRetryAfter } from "../../model/ProviderError.js"
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
    ): Effect.Effect<A, SlackApiError> => {
      const request = HttpClientRequest.post(`${root}${method}`).pipe(
        HttpClientRequest.bearerToken(token),
        HttpClientRequest.bodyUnsafeJson(body)
      )
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

    return { call, appToken: settings.appToken } as const
  })

export type SlackApi = Effect.Effect.Success<ReturnType<typeof make>>
