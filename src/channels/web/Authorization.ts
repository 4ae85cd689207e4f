import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Schema } from "effect"
import { Errors, PayloadTooLarge } from "./ApiError.js"
import { cookieName } from "./auth.js"
import { authenticate, type GuardSettings, Principal } from "./guard.js"

/**
 * Who may call a route: every group of the API but the open one (`/health`, the login exchange) carries this
 * middleware, so the decision is part of the route the router found. Its schemes are the bearer token (scripts, the
 * CLI) and the `kern_session` cookie a login ticket makes (a browser).
 */
export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("kern/channels/web/Authorization", {
  provides: Principal,
  failure: Schema.Union(Errors.Unauthorized, Errors.Forbidden, Errors.ServerError),
  security: {
    bearer: HttpApiSecurity.bearer,
    cookie: HttpApiSecurity.apiKey({ key: cookieName, in: "cookie" })
  }
}) {}

/**
 * Both schemes lead to guard.ts's one decision, which reads the whole request: which credential counts and in what
 * order (a token in the URL refused first, a bearer before a cookie, a cookie's write checked for its Origin) is
 * decided there, not by the order in which the platform tries these keys, nor by its reading of the header (it takes
 * whatever follows the first 7 characters, whatever the scheme).
 */
export const layer = (settings: GuardSettings) =>
  Layer.succeed(Authorization, {
    bearer: () => authenticate(settings),
    cookie: () => authenticate(settings)
  })

/** The body cap, before a route reads anything: a Content-Length over it is refused unread (413). */
export class BodyLimit extends HttpApiMiddleware.Tag<BodyLimit>()("kern/channels/web/BodyLimit", {
  failure: Errors.PayloadTooLarge
}) {}

/** `limitBytes` for every route but `POST /message`, which carries files: `messageLimitBytes` for it. */
export const bodyLimitLayer = (limitBytes: number, messageLimitBytes: number = limitBytes) =>
  Layer.succeed(
    BodyLimit,
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const limit = request.method === "POST" && request.url.split("?")[0] === "/message" ? messageLimitBytes : limitBytes
      const length = Number(request.headers["content-length"] ?? "0")
      if (Number.isFinite(length) && length > limit) {
        return yield* new PayloadTooLarge({ error: `the body is larger than ${limit} bytes` })
      }
    })
  )
