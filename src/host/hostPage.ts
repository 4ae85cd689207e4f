import { Headers, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schedule, Stream } from "effect"
import { type ApiError, apiErrorResponse, errorResponse, Forbidden, serverError } from "../channels/web/ApiError.js"
import { authenticate, type GuardSettings } from "../channels/web/guard.js"
import { keepaliveFrame, keepaliveInterval, openFrame } from "../channels/web/sse.js"
import { asset, defaultWebRoot, htmlPage } from "../channels/web/static.js"
import { ownOrigins } from "../channels/web/WebServer.js"
import type { Door } from "./hostDoor.js"
import { HostAgents } from "./HostAgents.js"
import { openAgent } from "./hostOpen.js"
import type { HostServerOptions } from "./HostServer.js"
import { agentsBody } from "./hostAgentsBody.js"
import { hostCookieCleared, hostCookieName, hostSessionCookie, makeHostLogins, withoutHostCookie } from "./hostSessions.js"

type PageRoute = Extract<Door, { readonly _tag: "HostPage" | "HostAsset" | "HostLogin" | "HostLogout" | "HostEvents" | "HostOpen" }>

const json = (status: number, body: unknown) => HttpServerResponse.unsafeJson(body, { status })

const agentsFrame = (data: string) => `event: agents\ndata: ${data}\n\n`

/**
 * `kern serve`'s host page and what it needs: the page (`/`, host.html of the built UI) and its files, its login
 * (`POST /host/login` with the host token as a bearer: a session cookie for the whole server, HttpOnly, SameSite=Strict;
 * the token itself never in a URL or the browser's storage), its logout, the agents' list as an event stream
 * (`/host/events`: the list at once, then again on each change, otherwise only keepalive comments), and the
 * hand-over into an agent's UI (`POST /host/open/<name>`, hostOpen.ts).
 *
 * Who may call is decided by the agent's own guard (guard.ts's authenticate) with the host's settings: the host token
 * as a bearer, or the host session's cookie (`kern_host_session`, never an agent's `kern_session`), a cookie's write
 * only from one of the host's own origins.
 */
export const makeHostPage = (options: HostServerOptions) =>
  Effect.gen(function*() {
    const agents = yield* HostAgents
    const logins = yield* makeHostLogins
    const webRoot = options.webRoot ?? defaultWebRoot()
    const guard: GuardSettings = {
      token: options.token,
      logins,
      trustedOrigins: new Set(ownOrigins(options.host, options.port)),
      corsOrigins: new Set(),
      cookieName: hostCookieName
    }
    const refusedBy = (error: ApiError) =>
      error._tag === "Unauthorized"
        ? errorResponse(401, { error: `${error.error} (the host's routes take the host token, KERN_HOST_TOKEN, or the host page's login)` })
        : apiErrorResponse(error)

    /** Who asks, by the host's guard; the answer to give when it refuses. */
    const principal = authenticate(guard).pipe(
      Effect.map((who) => ({ _tag: "Allowed", who }) as const),
      Effect.catchAll((error) => Effect.succeed({ _tag: "Refused", response: refusedBy(error) } as const))
    )

    /** Nothing when the host's guard lets the request in; its refusal otherwise. */
    const refusal = Effect.map(principal, (p) => p._tag === "Refused" ? p.response : undefined)

    const login = Effect.gen(function*() {
      const who = yield* authenticate(guard)
      // Only the token makes a session: a session does not mint another one.
      if (who !== "token") return yield* new Forbidden({ error: "the host page's login takes the host token as a bearer" })
      const issued = yield* logins.issue
      const secret = yield* logins.redeem(issued.ticket).pipe(Effect.mapError(serverError))
      if (secret === undefined) return yield* serverError({ message: "the login could not be made" })
      return HttpServerResponse.unsafeJson({ ok: true }, {
        status: 200,
        headers: { "set-cookie": hostSessionCookie(secret, logins.limits.maxAgeMs), "cache-control": "no-store" }
      })
    }).pipe(Effect.catchAll((error) => Effect.succeed(refusedBy(error))))

    const logout = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      yield* authenticate(guard)
      const cookie = request.cookies[hostCookieName]
      if (cookie !== undefined) yield* logins.end(cookie).pipe(Effect.mapError(serverError))
      return HttpServerResponse.unsafeJson({ ok: true }, { status: 200, headers: { "set-cookie": hostCookieCleared, "cache-control": "no-store" } })
    }).pipe(Effect.catchAll((error) => Effect.succeed(refusedBy(error))))

    const events = Effect.gen(function*() {
      const refused = yield* refusal
      if (refused !== undefined) return refused
      const encoder = new TextEncoder()
      // The whole list first (none hosted included), then again on each agent's change, sent when it differs.
      const lists = Stream.concat(Stream.fromEffect(agents.list), Stream.mapEffect(agents.changes, () => agents.list)).pipe(
        Stream.map((list) => JSON.stringify(agentsBody(list))),
        Stream.changes,
        Stream.map(agentsFrame)
      )
      const body = Stream.concat(
        Stream.make(openFrame),
        Stream.merge(lists, Stream.fromSchedule(Schedule.spaced(keepaliveInterval)).pipe(Stream.as(keepaliveFrame)), { haltStrategy: "left" })
      ).pipe(Stream.map((frame) => encoder.encode(frame)))
      return HttpServerResponse.stream(body, {
        contentType: "text/event-stream",
        headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
      })
    })

    const open = (name: string) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const refused = yield* refusal
        if (refused !== undefined) return refused
        const found = yield* agents.handle(name)
        if (Option.isNone(found)) return errorResponse(404, { error: `no agent ${name} is hosted here` })
        // Woken first: a folder that cannot run is refused with why, and its problem shows in the list.
        const woken = yield* Effect.either(found.value.wake("opened from the host page"))
        if (woken._tag === "Left") return errorResponse(503, { error: woken.left.message })
        const token = yield* Effect.either(options.agentToken(found.value.dir))
        if (token._tag === "Left") return errorResponse(503, { error: `could not open ${name}: ${token.left.message}` })
        return yield* openAgent(found.value, token.right, request).pipe(
          Effect.catchTag("HostOpenError", (error) => Effect.succeed(errorResponse(503, { error: error.message })))
        )
      })

    const allowed = (route: PageRoute, method: string) =>
      route._tag === "HostPage" || route._tag === "HostAsset" || route._tag === "HostEvents" ? method === "GET" || method === "HEAD" : method === "POST"

    const serve = (route: PageRoute, request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        if (!allowed(route, request.method)) return errorResponse(405, { error: `${request.method} is not allowed here` })
        switch (route._tag) {
          case "HostPage":
            return yield* htmlPage(webRoot, "host.html").pipe(Effect.orElseSucceed(() => errorResponse(500, { error: "the host page could not be read" })))
          case "HostAsset":
            return yield* asset(webRoot, route.path).pipe(Effect.catchAll((error) => Effect.succeed(apiErrorResponse(error))))
          case "HostLogin":
            return yield* login
          case "HostLogout":
            return yield* logout
          case "HostEvents":
            return yield* events
          case "HostOpen":
            return yield* open(route.name)
        }
      }).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request))

    /** The request an agent's app is handed: its target under the prefix, and no host session cookie. */
    const forAgent = (request: HttpServerRequest.HttpServerRequest, target: string) => {
      const cookie = request.headers["cookie"]
      if (cookie === undefined) return request.modify({ url: target })
      const kept = withoutHostCookie(cookie)
      const headers = kept === undefined ? Headers.remove(request.headers, "cookie") : Headers.set(request.headers, "cookie", kept)
      return request.modify({ url: target, headers })
    }

    return { serve, refusal, forAgent } as const
  })
