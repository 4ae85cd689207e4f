import { AiError } from "@effect/ai"
import { Either, Schema } from "effect"
import { parseJsonText } from "../config/json.js"

export const ProviderErrorReason = Schema.Literal("network", "auth", "rate_limit", "billing", "provider", "no_output")
export type ProviderErrorReason = typeof ProviderErrorReason.Type

/**
 * Why a model call failed, in one line a user can act on. `reason` decides what happens next: network,
 * rate_limit and 5xx provider failures are retried (see `providerRetrySchedule`); the rest fail at once.
 */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  reason: ProviderErrorReason,
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  /** Seconds the provider asked us to wait (`Retry-After`), already converted from an HTTP date. */
  retryAfterSeconds: Schema.optional(Schema.Number),
  /**
   * The request itself failed (no answer, or an answer other than 2xx), after the HTTP client's own retries
   * (retryingClient): a caller that retries a broken stream does not retry this one again.
   */
  duringRequest: Schema.optional(Schema.Boolean)
}) {
  /** Whether trying the same request again can succeed. */
  get retryable(): boolean {
    return this.reason === "network" || this.reason === "rate_limit" ||
      (this.reason === "provider" && this.status !== undefined && this.status >= 500)
  }
}

/** `error` as a failure of the request itself (`duringRequest`). */
export const requestFailure = (error: ProviderError): ProviderError =>
  new ProviderError({
    reason: error.reason,
    message: error.message,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    duringRequest: true
  })

/** What the messages name: where the provider lives and which variable holds its key. */
export interface ProviderContext {
  readonly provider: string
  readonly baseURL: string
  readonly keyEnv?: string | undefined
}

/** `Retry-After` as seconds from `nowMillis`: delta-seconds or an HTTP date; undefined when absent or unparsable. */
export const parseRetryAfter = (value: string | undefined, nowMillis: number): number | undefined => {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed)
  const date = Date.parse(trimmed)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, Math.ceil((date - nowMillis) / 1000))
}

const looksLikeHtml = (body: string, contentType: string | undefined): boolean =>
  (contentType ?? "").includes("text/html") || /^\s*<(!doctype|html|head|body|\?xml)/i.test(body)

const oneLine = (text: string, max = 200): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

const jsonMessage = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const error = "error" in value ? value.error : undefined
  if (typeof error === "string") return error
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  if ("message" in value && typeof value.message === "string") return value.message
  return undefined
}

/** The provider's own explanation from an error body: `error.message`, `message`, or the text itself. */
export const providerDetail = (body: string): string => {
  if (body.trim() === "") return "no details given"
  return oneLine(Either.match(parseJsonText(body), { onLeft: () => body, onRight: (value) => jsonMessage(value) ?? body }))
}

const keyHint = (context: ProviderContext): string =>
  context.keyEnv === undefined
    ? `check the API key configured for ${context.provider}`
    : `check ${context.keyEnv} in .kern/.env or the environment (or name another variable with "apiKeyEnv")`

/**
 * What an HTML page most likely means. A 5xx page comes from the server or a proxy in front of it, wherever the URL
 * points; otherwise a page is usually a website where an API was expected, and the missing /v1 is the common slip.
 */
const htmlHint = (baseURL: string, status: number | undefined): string =>
  status !== undefined && status >= 500
    ? "the server (or a proxy in front of it) failed; try again later"
    : /\/v\d+\/?$/.test(baseURL)
    ? "check \"baseURL\": it should be the API root, not a web page"
    : "check \"baseURL\" (OpenAI-style APIs usually end in /v1)"

/** A body that is not what the API promises: an HTML page (usually a wrong baseURL) or unexpected JSON. */
export const malformedBody = (
  context: ProviderContext,
  body: string,
  contentType: string | undefined,
  expected: string,
  status?: number
): ProviderError =>
  new ProviderError({
    reason: "provider",
    ...(status === undefined ? {} : { status }),
    message: looksLikeHtml(body, contentType)
      ? `${context.provider} at ${context.baseURL} answered with an HTML page instead of JSON` +
        `${status === undefined ? "" : ` (HTTP ${status})`}: ${htmlHint(context.baseURL, status)}`
      : `${context.provider} at ${context.baseURL} sent ${expected === "" ? "an unexpected body" : `a body that is not ${expected}`}` +
        `${status === undefined ? "" : ` (HTTP ${status})`}: ${oneLine(body, 120) || "empty"}`
  })

/** Classifies a non-2xx response. */
export const fromStatus = (
  context: ProviderContext,
  response: {
    readonly status: number
    readonly headers: Readonly<Record<string, string | undefined>>
    readonly body: string
  },
  nowMillis: number
): ProviderError => {
  const { body, headers, status } = response
  const contentType = headers["content-type"]
  if ((status === 401 || status === 403) && looksLikeHtml(body, contentType)) {
    // An API refuses a key with JSON; a page is a firewall, a proxy or a website answering instead of the API.
    return new ProviderError({
      reason: "provider",
      status,
      message: `${context.provider} at ${context.baseURL} refused the request with an HTML page (HTTP ${status}), ` +
        "not an API error: a firewall, proxy or web server in front of the API answered; check \"baseURL\" and " +
        "any proxy or VPN in between"
    })
  }
  if (status === 401 || status === 403) {
    return new ProviderError({
      reason: "auth",
      status,
      message: `${context.provider} rejected the API key (HTTP ${status}: ${providerDetail(body)}): ${keyHint(context)}`
    })
  }
  if (status === 402) {
    return new ProviderError({
      reason: "billing",
      status,
      message: `${context.provider} refused the request for billing reasons (HTTP 402: ${providerDetail(body)}): ` +
        "add credits or check the plan of the account behind the API key"
    })
  }
  if (status === 429) {
    const retryAfterSeconds = parseRetryAfter(headers["retry-after"], nowMillis)
    return new ProviderError({
      reason: "rate_limit",
      status,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      message: `${context.provider} is rate-limiting requests (HTTP 429${
        retryAfterSeconds === undefined ? "" : `, retry after ${retryAfterSeconds} s`
      }: ${providerDetail(body)}): wait, or lower the request rate`
    })
  }
  if (looksLikeHtml(body, contentType)) return malformedBody(context, body, contentType, "", status)
  return new ProviderError({
    reason: "provider",
    status,
    message: status >= 500
      ? `${context.provider} failed (HTTP ${status}: ${providerDetail(body)}): the provider is having trouble; try again later`
      : `${context.provider} refused the request (HTTP ${status}: ${providerDetail(body)})`
  })
}

export const networkError = (context: ProviderContext, cause: string): ProviderError =>
  new ProviderError({
    reason: "network",
    message: `cannot reach ${context.provider} at ${context.baseURL} (${oneLine(cause, 160)}): ` +
      "check the network and \"baseURL\""
  })

/** The answer's stream ended (or broke) before the provider said it was complete. */
export const streamCut = (context: ProviderContext, detail?: string): ProviderError =>
  new ProviderError({
    reason: "network",
    message: `${context.provider} at ${context.baseURL} closed the stream before the answer was complete` +
      `${detail === undefined ? "" : ` (${oneLine(detail, 120)})`}: try again; if it keeps happening, check the server ` +
      "or any proxy in between"
  })

export const noOutput = (context: ProviderContext, finishReason: string): ProviderError =>
  new ProviderError({
    reason: "no_output",
    message: `${context.provider} returned neither text nor tool calls (finish reason: ${finishReason}); ` +
      "the model may have refused or hit its output limit"
  })

/** How a ProviderError travels through @effect/ai's closed AiError union: as the cause of an UnknownError. */
export const toAiError = (error: ProviderError, method: string): AiError.AiError =>
  new AiError.UnknownError({ module: "kern.model", method, description: error.message, cause: error })

const contextOf = (error: AiError.AiError, context: ProviderContext | undefined): ProviderContext => {
  if (context !== undefined) return context
  if (error._tag === "HttpRequestError" || error._tag === "HttpResponseError") {
    return { provider: "the model provider", baseURL: error.request.url }
  }
  return { provider: "the model provider", baseURL: "its base URL" }
}

/**
 * Recovers the ProviderError behind an AiError from any provider layer: kern's own models carry it as the
 * cause; errors raised inside @effect/ai or its provider packages are classified from what they hold.
 */
export const fromAiError = (error: AiError.AiError, context?: ProviderContext, nowMillis = 0): ProviderError => {
  const where = contextOf(error, context)
  switch (error._tag) {
    case "UnknownError":
      return error.cause instanceof ProviderError
        ? error.cause
        : new ProviderError({ reason: "provider", message: error.message })
    // The request itself failed: sent through retryingClient, it was retried already.
    case "HttpRequestError":
      return requestFailure(networkError(where, error.description ?? error.reason))
    case "HttpResponseError": {
      const status = error.response.status
      const body = error.body ?? ""
      if (status >= 200 && status < 300) {
        return malformedBody(where, body, error.response.headers["content-type"], "the expected JSON", status)
      }
      return requestFailure(fromStatus(where, { status, headers: error.response.headers, body }, nowMillis))
    }
    case "MalformedOutput":
      return new ProviderError({
        reason: "provider",
        message: `${where.provider} sent output kern cannot use: ${error.description ?? error.message}`
      })
    case "MalformedInput":
      return new ProviderError({
        reason: "provider",
        message: `the request could not be sent to ${where.provider}: ${error.description ?? error.message}`
      })
  }
}
