import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect } from "effect"
import { Forbidden, serverError, Unauthorized } from "./ApiError.js"
import { bearerOf, cookieName, cookieOf, type Logins, secretMatches } from "./auth.js"

/** Headers on every answer: no script but our own files, no framing, no sniffing, no referrer. */
export const securityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin"
}

export interface GuardSettings {
  readonly token: string
  /** Whether a presented session cookie is live (an agent's Logins; `kern serve` checks a sleeping agent's kern.db). */
  readonly logins: Pick<Logins, "isSession">
  /** Origins a cookie-authenticated POST may come from: the server's own, and corsOrigins. */
  readonly trustedOrigins: ReadonlySet<string>
  readonly corsOrigins: ReadonlySet<string>
  /** The session cookie this server reads: `kern_session` (an agent's); `kern serve`'s host page has its own. */
  readonly cookieName?: string | undefined
}

/** Query parameters that look like a credential: refused outright, so a token never ends up in a log or history. */
const credentialParams = ["token", "access_token", "auth_token", "key", "api_key", "kern_auth_token"]

/** Who a guarded route's request comes from: the bearer token (scripts, the CLI) or a browser session cookie. */
export class Principal extends Context.Tag("kern/channels/web/Principal")<Principal, "token" | "cookie">() {}

/**
 * Who is asking: the bearer token (scripts, the CLI) or a browser session cookie; never a token in the URL. A
 * cookie-authenticated request that changes state must come from a trusted Origin, so another site cannot make the
 * browser post on the operator's behalf. The one decision of who may call: the API's Authorization middleware makes
 * it for every route it serves, and an unknown route is told apart from a known one only after it.
 */
export const authenticate = (settings: GuardSettings) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(request.url, "http://kern")
    if (credentialParams.some((name) => url.searchParams.has(name))) {
      return yield* new Unauthorized({ error: "credentials are never accepted in the URL: send Authorization: Bearer <token>" })
    }
    const bearer = bearerOf(request.headers["authorization"])
    if (bearer !== undefined) {
      if (secretMatches(settings.token, bearer)) return "token" as const
      return yield* new Unauthorized({ error: "wrong token" })
    }
    const cookie = cookieOf(request.headers["cookie"], settings.cookieName ?? cookieName)
    const live = cookie === undefined ? false : yield* settings.logins.isSession(cookie).pipe(Effect.mapError(serverError))
    if (!live) {
      return yield* new Unauthorized({ error: "not logged in: send Authorization: Bearer <token>, or log in with `kern open`" })
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      const origin = request.headers["origin"]
      if (origin === undefined || !settings.trustedOrigins.has(origin)) {
        return yield* new Forbidden({ error: "a browser request that changes state must come from the agent's own page (Origin)" })
      }
    }
    return "cookie" as const
  })

/** CORS headers for an allowed origin; none otherwise (the browser then refuses the answer to a foreign page). */
export const corsHeaders = (settings: GuardSettings, origin: string | undefined): Record<string, string> =>
  origin !== undefined && settings.corsOrigins.has(origin)
    ? {
      "access-control-allow-origin": origin,
      "access-control-allow-credentials": "true",
      "access-control-allow-headers": "authorization, content-type, last-event-id",
      "access-control-allow-methods": "GET, POST",
      "access-control-max-age": "600",
      vary: "Origin"
    }
    : {}

export const withHeaders = (response: HttpServerResponse.HttpServerResponse, headers: Readonly<Record<string, string>>) =>
  HttpServerResponse.setHeaders(response, headers)
