import { HttpClient, type HttpClientError, HttpClientResponse } from "@effect/platform"
import { Clock, Context, Data, Duration, Effect, Option, Schedule } from "effect"
import { fromStatus, networkError, type ProviderContext, ProviderError } from "./ProviderError.js"

/** A `Retry-After` longer than this is not waited out: the call fails and the caller decides. */
export const maxRetryAfterSeconds = 60

const shouldRetry = (error: ProviderError): boolean =>
  error.retryable && (error.retryAfterSeconds ?? 0) <= maxRetryAfterSeconds

/** A retry about to wait, as a person reads it: what failed and how long kern waits before it tries again. */
export interface RetryNotice {
  readonly text: string
  readonly waitMs: number
}

/**
 * Who is told of a retry besides the log, for the model call in whose fiber it happens: a turn provides it (modelStep)
 * so the people waiting on the turn see a progress line instead of silence. Without it, only the log is told.
 */
export class RetryNotices extends Context.Tag("kern/model/RetryNotices")<RetryNotices, (notice: RetryNotice) => Effect.Effect<void>>() {}

/**
 * A provider failure about to be retried, with how long kern waits first: told to RetryNotices, and logged. A warning
 * when nobody is told; when the people waiting are (a turn), an info line: a terminal shows warnings, and showed the
 * notice twice.
 */
const logRetry = (error: ProviderError, delay: Duration.Duration) => {
  const waitMs = Math.round(Duration.toMillis(delay))
  const text = `model provider failed (${error.message}); retrying in ${Duration.format(Duration.millis(waitMs))}`
  return Effect.flatMap(Effect.serviceOption(RetryNotices), (notices) =>
    (Option.isSome(notices) ? Effect.logInfo(text) : Effect.logWarning(text)).pipe(
      Effect.annotateLogs({ provider: error.reason, ...(error.status === undefined ? {} : { status: error.status }), waitMs }),
      Effect.zipRight(Option.isSome(notices) ? notices.value({ text, waitMs }) : Effect.void)
    ))
}

/**
 * Retries network failures, 429 and 5xx: 4 attempts in all, exponential from 1 s with jitter, never sooner than
 * the provider's `Retry-After`. Driven by Clock, so TestClock controls it in tests.
 */
export const providerRetrySchedule: Schedule.Schedule<ProviderError, ProviderError> = Schedule.exponential(
  "1 second",
  2
).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(3)),
  Schedule.whileInput(shouldRetry),
  Schedule.passthrough,
  Schedule.modifyDelay((error, delay) => Duration.max(delay, Duration.seconds(error.retryAfterSeconds ?? 0))),
  // Called only when the schedule goes on: each retry is one warning with the wait, in the caller's fiber (its turn).
  Schedule.modifyDelayEffect((error, delay) => Effect.as(logRetry(error, delay), delay))
)

/** Applies `providerRetrySchedule` to a model call that fails with ProviderError. */
export const withProviderRetry = <A, R>(effect: Effect.Effect<A, ProviderError, R>): Effect.Effect<A, ProviderError, R> =>
  Effect.retry(effect, providerRetrySchedule)

class RetryableStatus extends Data.TaggedError("RetryableStatus")<{
  readonly response: HttpClientResponse.HttpClientResponse
  readonly error: ProviderError
}> {}

const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500

/** Reads a failed response's body once and rebuilds the response, so the caller can still read it. */
const settle = (context: ProviderContext, response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function*() {
    const body = yield* response.text
    const now = yield* Clock.currentTimeMillis
    const error = fromStatus(context, { status: response.status, headers: response.headers, body }, now)
    const copy = HttpClientResponse.fromWeb(
      response.request,
      new Response(body, { status: response.status, headers: response.headers })
    )
    return yield* new RetryableStatus({ response: copy, error })
  })

const asProviderError = (context: ProviderContext) =>
(error: HttpClientError.HttpClientError | RetryableStatus): ProviderError => {
  switch (error._tag) {
    case "RetryableStatus":
      return error.error
    case "RequestError":
      return networkError(context, error.description ?? error.reason)
    case "ResponseError":
      return new ProviderError({ reason: "provider", message: error.message })
  }
}

/**
 * An HttpClient that retries transport failures, 429 and 5xx on `providerRetrySchedule` before anyone reads
 * the body; after the last attempt it hands back the last response (or transport error) unchanged, so every
 * provider (kern's own or @effect/ai's) reports it in its usual way.
 */
export const retryingClient = (context: ProviderContext) => (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transformResponse(client, (response) =>
    response.pipe(
      Effect.flatMap((res) => (isRetryableStatus(res.status) ? settle(context, res) : Effect.succeed(res))),
      Effect.retry(Schedule.mapInput(providerRetrySchedule, asProviderError(context))),
      Effect.catchTag("RetryableStatus", (last) => Effect.succeed(last.response))
    ))
