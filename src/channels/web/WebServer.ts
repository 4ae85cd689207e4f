import { FileSystem, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import * as NodeHttp from "node:http"
import { AgentRuntime } from "../../runtime/AgentRuntime.js"
import { Approvals } from "../../runtime/Approvals.js"
import { isoAt } from "../../session/envelope.js"
import { Channels } from "../../tools/Channels.js"
import { HeartbeatLog } from "../../runtime/HeartbeatLog.js"
import { AgentConfig } from "../../config/AgentConfig.js"
import { KnownSecrets } from "../../config/KnownSecrets.js"
import { ContextWindow } from "../../context/ContextWindow.js"
import { ToolRegistry } from "../../kernel/ToolRegistry.js"
import { NotesSummary } from "../../memory/NotesSummary.js"
import { redactHttpBody } from "../../model/redactHttpBody.js"
import { Tokenizer } from "../../model/tokenizer.js"
import { Recall } from "../../recall/Recall.js"
import { SessionStore } from "../../session/SessionStore.js"
import * as Api from "./api.js"
import { ApiError, errorResponse } from "./ApiError.js"
import { cookieName, makeLogins, ticketTtlMs } from "./auth.js"
import { BrowserSessions } from "./BrowserSessions.js"
import { EventHub } from "./EventHub.js"
import { authenticate, corsHeaders, guarded as guardedBy, type GuardSettings, Principal, securityHeaders, withHeaders } from "./guard.js"
import { headerValues, hostNames, hostRefusal, targetProblem } from "./requestGate.js"
import { makeRouter } from "./routes.js"
import * as RuntimeFeed from "./RuntimeFeed.js"
import { baseUrl, exposedWarning, isLoopback, ServerSetupError, type ServerSettings } from "./serverSetup.js"
import { asset, defaultWebRoot, indexPage } from "./static.js"

/** Request bodies beyond this are refused with 413. */
export const defaultBodyLimitBytes = 1024 * 1024

export interface WebServerOptions extends ServerSettings {
  /** What runs the server, as /status reports it (`kern run`, `kern start`). */
  readonly command: string
  readonly ticketTtlMs?: number | undefined
  readonly bodyLimitBytes?: number | undefined
  /** The built UI (`dist/web`); found beside the bundle by default. */
  readonly webRoot?: string | undefined
  /** Where the server's notices go (the warning for a non-loopback host). */
  readonly report?: ((line: string) => Effect.Effect<void>) | undefined
}

/** The origins a page of this server has: the configured host, and each loopback name when it is loopback. */
const ownOrigins = (host: string, port: number): ReadonlyArray<string> => {
  const names = isLoopback(host) ? ["127.0.0.1", "localhost", "[::1]"] : []
  return [baseUrl({ host, port }), ...names.map((name) => `http://${name}:${port}`)]
}

/** The cookie lives as long as the session may: a browser restart keeps it, the server decides when it ends. */
const sessionCookie = (id: string, maxAgeMs: number) =>
  `${cookieName}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(maxAgeMs / 1000)}`

const pathOf = (target: string): string => {
  const queryAt = target.indexOf("?")
  return queryAt === -1 ? target : target.slice(0, queryAt)
}

/**
 * The server's routes, in two routers: `open` (the health check, the login exchange, the UI's files: they hold no
 * data) and `guarded`, every route of which passes the guard (bearer token, or a ticket-made session cookie with a
 * trusted Origin for writes) before its handler runs. Authentication is part of the route the router finds, so it is
 * decided on exactly the path that route serves.
 */
export const makeRoutes = (options: WebServerOptions) =>
  Effect.gen(function*() {
    const runtime = yield* AgentRuntime
    const hub = yield* EventHub
    const config = yield* AgentConfig
    const fs = yield* FileSystem.FileSystem
    const sql = yield* SqlClient.SqlClient
    const sessions = yield* SessionStore
    const summaries = yield* NotesSummary
    const heartbeatLog = yield* HeartbeatLog
    const recall = yield* Recall
    const approvals = yield* Approvals
    const channels = yield* Channels
    const registry = yield* ToolRegistry
    const tokenizer = yield* Tokenizer
    const context = yield* ContextWindow
    const logins = yield* makeLogins({ ticketTtlMs: options.ticketTtlMs ?? ticketTtlMs })
    const bodyLimitBytes = options.bodyLimitBytes ?? defaultBodyLimitBytes
    const webRoot = options.webRoot ?? defaultWebRoot()
    const startedAtMs = runtime.startedAtMs
    const guard: GuardSettings = {
      token: options.token,
      logins,
      trustedOrigins: new Set([...ownOrigins(options.host, options.port), ...options.corsOrigins]),
      corsOrigins: new Set(options.corsOrigins)
    }
    const api = makeRouter(
      { runtime, hub, config, fs, sql, sessions, summaries, heartbeatLog, recall, approvals, channels, registry, tokenizer, context, server: { host: options.host, port: options.port, command: options.command, startedAtMs } },
      { bodyLimitBytes }
    )
    const base = baseUrl(options)

    const ticket = Effect.gen(function*() {
      // A browser session must not mint more logins: only the token holder (the CLI) may.
      if ((yield* Principal) !== "token") return yield* new ApiError({ status: 403, error: "tickets are issued to the bearer token only" })
      const issued = yield* logins.issue
      return yield* HttpServerResponse.schemaJson(Api.TicketResponse)({
        ticket: issued.ticket,
        url: `${base}/auth?ticket=${issued.ticket}`,
        expiresAt: isoAt(issued.expiresAtMs)
      }).pipe(Effect.orDie)
    })

    const login = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const presented = new URL(request.url, "http://kern").searchParams.get("ticket")
      if (presented === null || presented === "") return yield* new ApiError({ status: 400, error: "ticket: missing", field: "ticket" })
      const session = yield* logins.redeem(presented).pipe(Effect.mapError((error) => new ApiError({ status: 500, error: error.message })))
      if (session === undefined) {
        return yield* new ApiError({ status: 401, error: "this login link is used or expired: run `kern open` for a new one" })
      }
      return HttpServerResponse.empty({
        status: 303,
        headers: { location: "/", "set-cookie": sessionCookie(session, logins.limits.maxAgeMs), "cache-control": "no-store" }
      })
    })

    const assetFile = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => asset(webRoot, pathOf(request.url)))

    const bodyCap = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const length = Number(request.headers["content-length"] ?? "0")
      if (Number.isFinite(length) && length > bodyLimitBytes) {
        return yield* new ApiError({ status: 413, error: `the body is larger than ${bodyLimitBytes} bytes` })
      }
    })

    const open = api.open.pipe(
      HttpRouter.get("/auth", login),
      HttpRouter.get("/", indexPage(webRoot)),
      HttpRouter.get("/index.html", indexPage(webRoot)),
      HttpRouter.get("/assets/*", assetFile)
    )
    const guarded = api.guarded.pipe(
      HttpRouter.post("/auth/ticket", ticket),
      HttpRouter.use((handler) => guardedBy(guard)(Effect.zipRight(bodyCap, handler)))
    )
    return { open, guarded, guard } as const
  })

/**
 * The HTTP API and web UI over the running agent. A request whose target is not in canonical form, or whose Host is
 * not this server's, is refused before anything else; then the router finds the route, and a guarded route
 * authenticates. Every answer carries the security headers. Unknown routes are 404 JSON (after authentication); a
 * failure inside a route is 500 JSON and logged, never a stack trace.
 */
export const makeApp = (options: WebServerOptions) =>
  Effect.gen(function*() {
    const routes = yield* makeRoutes(options)
    const { secrets } = yield* KnownSecrets
    const router = HttpRouter.concat(routes.open, routes.guarded)
    const hosts = hostNames(options.host)

    const gate = (request: HttpServerRequest.HttpServerRequest): ApiError | undefined => {
      const target = targetProblem(request.url)
      if (target !== undefined) return new ApiError({ status: 400, error: `the request target is not in canonical form: ${target}` })
      const host = hostRefusal(hosts, headerValues(NodeHttpServerRequest.toIncomingMessage(request).rawHeaders, "host"))
      return host === undefined ? undefined : new ApiError(host)
    }

    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const refused = gate(request)
      if (refused !== undefined) return withHeaders(errorResponse(refused), securityHeaders)
      const cors = corsHeaders(routes.guard, request.headers["origin"])
      if (request.method === "OPTIONS") {
        const response = Object.keys(cors).length > 0
          ? HttpServerResponse.empty({ status: 204 })
          : errorResponse(new ApiError({ status: 403, error: "cross-origin requests are off (corsOrigins)" }))
        return withHeaders(response, { ...securityHeaders, ...cors })
      }
      const notFound = HttpServerResponse.unsafeJson({ error: `no route ${request.method} ${pathOf(request.url)}` }, { status: 404 })
      const response = yield* router.pipe(
        // An unknown route is told apart from a known one only to whom the guard lets in.
        Effect.catchTag("RouteNotFound", () => Effect.as(authenticate(routes.guard), notFound)),
        Effect.catchTag("ApiError", (error) => Effect.succeed(errorResponse(error))),
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logError(`kern: ${request.method} ${request.url} failed`, cause),
            HttpServerResponse.unsafeJson({ error: "internal error (see the agent's log)" }, { status: 500 })
          )
        )
      )
      // The one door out: no answer carries a known secret, whatever route built it (/history of a session written
      // before redaction, /recall/search over its chunks, the event stream).
      const body = redactHttpBody(response.body, secrets)
      return withHeaders(body === response.body ? response : HttpServerResponse.setBody(response, body), { ...securityHeaders, ...cors })
    })
    return app
  })

/**
 * The server as a scoped layer over the running agent: the event hub fed by every turn, the routes, listening on
 * host:port until the scope closes. Binding anything but loopback is reported as the risk it is.
 */
export const layer = (options: WebServerOptions) => {
  const report = options.report ?? ((line: string) => Effect.logWarning(line))
  const serve = Layer.unwrapScoped(Effect.gen(function*() {
    if (!isLoopback(options.host)) yield* report(`warning: ${exposedWarning(options.host)}`)
    const app = yield* makeApp(options)
    return HttpServer.serve(app)
  }))
  return Layer.unwrapScoped(Effect.sync(() => {
    const server = NodeHttp.createServer()
    const listen = NodeHttpServer.layer(() => server, { host: options.host, port: options.port }).pipe(
      Layer.mapError((error) => new ServerSetupError({ message: `could not listen on ${options.host}:${options.port}: ${listenCause(error)}` }))
    )
    // An event stream never ends on its own, and closing a Node server waits for every open connection: without
    // this, a stopping agent waits for every browser tab (and `kern stop` ends up killing it). Released before the
    // server's own close, which then has nothing left to wait for.
    const dropConnections = Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections())))
    return Layer.merge(
      serve.pipe(
        Layer.provide(RuntimeFeed.layer),
        Layer.provideMerge(EventHub.Default),
        Layer.provide(HeartbeatLog.Default),
        Layer.provide(BrowserSessions.Default),
        // For GET /context/system's token counts.
        Layer.provide(Tokenizer.Default)
      ),
      dropConnections
    ).pipe(Layer.provide(listen))
  }))
}

const listenCause = (error: { readonly cause?: unknown; readonly message: string }): string => {
  const cause = error.cause
  if (typeof cause === "object" && cause !== null && "code" in cause && cause.code === "EADDRINUSE") {
    return "the port is in use (another program, or another agent); set \"port\" in .kern/config.json or KERN_PORT"
  }
  return cause instanceof Error ? cause.message : error.message
}
