import { HttpApiBuilder, HttpApiError, HttpServer, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Cause, Context as EffectContext, Effect, Layer } from "effect"
import * as NodeHttp from "node:http"
import { AgentRuntime } from "../../runtime/AgentRuntime.js"
import { HeartbeatLog } from "../../runtime/HeartbeatLog.js"
import { KnownSecrets } from "../../config/KnownSecrets.js"
import { redactHttpBody } from "../../model/redactHttpBody.js"
import { Tokenizer } from "../../model/tokenizer.js"
import { MediaStore } from "../../media/MediaStore.js"
import { JobStore } from "../../tools/JobStore.js"
import { SubAgentStore } from "../../tools/subagents/SubAgentStore.js"
import { apiErrorResponse, badRequest, errorResponse } from "./ApiError.js"
import { type Logins, makeLogins, ticketTtlMs } from "./auth.js"
import * as Authorization from "./Authorization.js"
import { BrowserSessions } from "./BrowserSessions.js"
import { EventHub } from "./EventHub.js"
import { authenticate, corsHeaders, type GuardSettings, securityHeaders, withHeaders } from "./guard.js"
import * as Approvals from "./handlers/approvals.js"
import * as QuestionsHandlers from "./handlers/questions.js"
import * as Auth from "./handlers/auth.js"
import * as Context from "./handlers/context.js"
import * as Conversation from "./handlers/conversation.js"
import * as Media from "./handlers/media.js"
import * as Notes from "./handlers/notes.js"
import * as Open from "./handlers/open.js"
import * as Recall from "./handlers/recall.js"
import * as Schedules from "./handlers/schedules.js"
import * as Sessions from "./handlers/sessions.js"
import * as Status from "./handlers/status.js"
import * as Turns from "./handlers/turns.js"
import * as Users from "./handlers/users.js"
import { KernApi } from "./KernApi.js"
import { headerValues, hostNames, hostRefusal, targetProblem } from "./requestGate.js"
import * as RuntimeFeed from "./RuntimeFeed.js"
import { blockedPortWarning, browserBlocked } from "./blockedPorts.js"
import { baseUrl, exposedWarning, isLoopback, ServerSetupError, type ServerSettings } from "./serverSetup.js"
import { BrowserLogins, ServerInfo } from "./ServerInfo.js"
import { asset, defaultWebRoot, indexPage } from "./static.js"

/** Request bodies beyond this are refused with 413. */
export const defaultBodyLimitBytes = 1024 * 1024

/**
 * `POST /message`'s body cap: the files a message may carry (`media.maxTurnBytes`) in base64 (4 characters for 3
 * bytes, and 1 KiB for padding) on top of the ordinary cap, which the text, the names and the JSON around them share.
 */
export const messageBodyLimit = (bodyLimitBytes: number, maxTurnBytes: number): number =>
  bodyLimitBytes + Math.ceil(maxTurnBytes / 3) * 4 + 1024

export interface WebServerOptions extends ServerSettings {
  /** What runs the server, as /status reports it (`kern run`, `kern start`). */
  readonly command: string
  readonly ticketTtlMs?: number | undefined
  readonly bodyLimitBytes?: number | undefined
  /** The built UI (`dist/web`); found beside the bundle by default. */
  readonly webRoot?: string | undefined
  /** Where the server's notices go (the warning for a non-loopback host). */
  readonly report?: ((line: string) => Effect.Effect<void>) | undefined
  /** Where the routes sit on a shared server (`/agents/<name>` under `kern serve`); "" by default. ServerInfo.basePath. */
  readonly basePath?: string | undefined
}

/** The origins a page of this server has: the configured host, and each loopback name when it is loopback. */
export const ownOrigins = (host: string, port: number): ReadonlyArray<string> => {
  const names = isLoopback(host) ? ["127.0.0.1", "localhost", "[::1]"] : []
  return [baseUrl({ host, port }), ...names.map((name) => `http://${name}:${port}`)]
}

const pathOf = (target: string): string => {
  const queryAt = target.indexOf("?")
  return queryAt === -1 ? target : target.slice(0, queryAt)
}

/** Every group of KernApi, implemented. */
const groups = Layer.mergeAll(
  Open.layer,
  Auth.layer,
  Conversation.layer,
  Status.layer,
  Sessions.layer,
  Media.layer,
  Context.layer,
  Recall.layer,
  Approvals.layer,
  QuestionsHandlers.layer,
  Notes.layer,
  Users.layer,
  Turns.layer,
  Schedules.layer
)

/** The UI's files: open (they hold no data), raw routes on the API's router; nothing outside `assets/` is reachable. */
const webFiles = (webRoot: string) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      yield* router.get("/", indexPage(webRoot))
      yield* router.get("/index.html", indexPage(webRoot))
      yield* router.get("/assets/*", Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => asset(webRoot, pathOf(request.url))))
    })
  )

/** A query or path parameter that did not decode: 400 naming it, as every bad input is answered. */
const decodeErrorsNamed = HttpApiBuilder.middleware(KernApi, (app) =>
  Effect.catchAllCause(app, (cause) => {
    const failure = Cause.squash(cause)
    if (!(failure instanceof HttpApiError.HttpApiDecodeError)) return Effect.failCause(cause)
    const issue = failure.issues[0]
    const field = String(issue?.path[0] ?? "request")
    return Effect.fail(badRequest(field, `${field}: ${issue?.message ?? failure.message}`))
  }))

/**
 * The routes as KernApi declares them, each group implemented with the services it needs, behind the Authorization
 * middleware (bearer token, or a ticket-made session cookie with a trusted Origin for writes); and the UI's files.
 * Authentication is part of the route the router finds, so it is decided on exactly the path that route serves.
 */
export const makeRoutes = (options: WebServerOptions) =>
  Effect.gen(function*() {
    const runtime = yield* AgentRuntime
    const media = yield* MediaStore
    const logins = yield* makeLogins({ ticketTtlMs: options.ticketTtlMs ?? ticketTtlMs })
    const guard: GuardSettings = {
      token: options.token,
      logins,
      trustedOrigins: new Set([...ownOrigins(options.host, options.port), ...options.corsOrigins]),
      corsOrigins: new Set(options.corsOrigins)
    }
    const server = ServerInfo.of({
      host: options.host,
      port: options.port,
      command: options.command,
      startedAtMs: runtime.startedAtMs,
      baseUrl: `${baseUrl(options)}${options.basePath ?? ""}`,
      basePath: options.basePath ?? "",
      bodyLimitBytes: options.bodyLimitBytes ?? defaultBodyLimitBytes,
      messageBodyLimitBytes: messageBodyLimit(options.bodyLimitBytes ?? defaultBodyLimitBytes, media.limits.maxTurnBytes)
    })
    const api = HttpApiBuilder.api(KernApi).pipe(
      Layer.provide(groups),
      Layer.provide(Layer.mergeAll(Authorization.layer(guard), Authorization.bodyLimitLayer(server.bodyLimitBytes, server.messageBodyLimitBytes)))
    )
    const routes = yield* Layer.build(
      Layer.mergeAll(api, webFiles(options.webRoot ?? defaultWebRoot()), decodeErrorsNamed, HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer).pipe(
        Layer.provide(Layer.succeed(ServerInfo, server)),
        Layer.provide(Layer.succeed(BrowserLogins, logins))
      )
    )
    const app = yield* HttpApiBuilder.httpApp.pipe(Effect.provide(routes))
    return { app, guard } as const
  })

/**
 * The HTTP API and web UI over the running agent. A request whose target is not in canonical form, or whose Host is
 * not this server's, is refused before anything else; then the router finds the route, and a guarded route
 * authenticates. Every answer carries the security headers. Unknown routes are 404 JSON (after authentication); a
 * failure inside a route is 500 JSON and logged, never a stack trace.
 */
export const makeApp = (options: WebServerOptions) => Effect.map(makeAppWithSessions(options), ({ app }) => app)

/** The app (makeApp) and its browser sessions' check, for a host that decides on them before waking the agent. */
const makeAppWithSessions = (options: WebServerOptions) =>
  Effect.gen(function*() {
    const routes = yield* makeRoutes(options)
    const { secrets } = yield* KnownSecrets
    const hosts = hostNames(options.host)

    const gate = (request: HttpServerRequest.HttpServerRequest) => {
      const target = targetProblem(request.url)
      if (target !== undefined) return errorResponse(400, { error: `the request target is not in canonical form: ${target}` })
      const host = hostRefusal(hosts, headerValues(NodeHttpServerRequest.toIncomingMessage(request).rawHeaders, "host"))
      return host === undefined ? undefined : errorResponse(host.status, host)
    }

    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const refused = gate(request)
      if (refused !== undefined) return withHeaders(refused, securityHeaders)
      const cors = corsHeaders(routes.guard, request.headers["origin"])
      if (request.method === "OPTIONS") {
        const response = Object.keys(cors).length > 0
          ? HttpServerResponse.empty({ status: 204 })
          : errorResponse(403, { error: "cross-origin requests are off (corsOrigins)" })
        return withHeaders(response, { ...securityHeaders, ...cors })
      }
      const notFound = errorResponse(404, { error: `no route ${request.method} ${pathOf(request.url)}` })
      // The API's router is typed as if it never failed; it does fail with RouteNotFound for an unknown route.
      const response = yield* routes.app.pipe(
        Effect.catchAllCause((cause) => {
          // An unknown route is told apart from a known one only to whom the guard lets in.
          if (Cause.squash(cause) instanceof HttpServerError.RouteNotFound) {
            return authenticate(routes.guard).pipe(Effect.as(notFound), Effect.catchAll((error) => Effect.succeed(apiErrorResponse(error))))
          }
          return Effect.as(
            Effect.logError(`kern: ${request.method} ${request.url} failed`, cause),
            errorResponse(500, { error: "internal error (see the agent's log)" })
          )
        })
      )
      // The one door out: no answer carries a known secret, whatever route built it (/history of a session written
      // before redaction, /recall/search over its chunks, the event stream).
      const body = redactHttpBody(response.body, secrets)
      // A body refused unread (Content-Length over the cap) is never drained: the connection goes with it.
      const close = response.status === 413 ? { connection: "close" } : {}
      // A route's own stricter policy stands (a stored file's: mediaAccess.ts); every other answer gets the page's.
      const policy = response.headers["content-security-policy"]
      const headers = { ...securityHeaders, ...(policy === undefined ? {} : { "content-security-policy": policy }), ...cors, ...close }
      return withHeaders(body === response.body ? response : HttpServerResponse.setBody(response, body), headers)
    })
    return { app, sessions: AgentSessions.of({ isSession: routes.guard.logins.isSession }) } as const
  })

/** The agent's whole HTTP API and UI as one app (makeApp), for a server to serve: its own (layer) or a host's. */
export class AgentHttpApp extends EffectContext.Tag("kern/channels/web/AgentHttpApp")<
  AgentHttpApp,
  Effect.Effect.Success<ReturnType<typeof makeApp>>
>() {}

/** Whether a presented cookie is one of the agent's live browser sessions: what `kern serve` checks before the agent. */
export class AgentSessions extends EffectContext.Tag("kern/channels/web/AgentSessions")<
  AgentSessions,
  Pick<Logins, "isSession">
>() {}

/**
 * The agent's app over the running agent, with no server: the event hub fed by every turn and the routes. `kern
 * serve` builds one per live agent and serves it under `/agents/<name>` (options.basePath).
 */
export const appLayer = (options: WebServerOptions) =>
  Layer.scopedContext(
    Effect.map(makeAppWithSessions(options), ({ app, sessions }) => EffectContext.make(AgentHttpApp, app).pipe(EffectContext.add(AgentSessions, sessions)))
  ).pipe(
    Layer.provide(RuntimeFeed.layer),
    Layer.provideMerge(EventHub.Default),
    Layer.provide(HeartbeatLog.Default),
    // For GET /status's running jobs and sub-agents (kern.db's rows; stateless over the agent's SqlClient).
    Layer.provide(Layer.merge(JobStore.Default, SubAgentStore.Default)),
    Layer.provide(BrowserSessions.Default),
    // For GET /context/system's token counts.
    Layer.provide(Tokenizer.Default)
  )

/**
 * The server as a scoped layer over the running agent: the agent's app (appLayer), listening on host:port until the
 * scope closes. Binding anything but loopback is reported as the risk it is, and a port browsers refuse as such.
 */
export const layer = (options: WebServerOptions) => {
  const report = options.report ?? ((line: string) => Effect.logWarning(line))
  const serve = Layer.unwrapScoped(Effect.gen(function*() {
    if (!isLoopback(options.host)) yield* report(`warning: ${exposedWarning(options.host)}`)
    if (browserBlocked(options.port)) yield* report(`warning: ${blockedPortWarning(options.port, `"port" in .kern/config.json`)}`)
    return HttpServer.serve(yield* AgentHttpApp)
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
    // The app is made before the server listens, and served as soon as it does: a request that came in between
    // (a client that found the address in the lock) would find no handler and stay unanswered for good.
    return Layer.merge(serve, dropConnections).pipe(Layer.provide(listen), Layer.provideMerge(appLayer(options)))
  }))
}

const listenCause = (error: { readonly cause?: unknown; readonly message: string }): string => {
  const cause = error.cause
  if (typeof cause === "object" && cause !== null && "code" in cause && cause.code === "EADDRINUSE") {
    return "the port is in use (another program, or another agent); set \"port\" in .kern/config.json or KERN_PORT"
  }
  return cause instanceof Error ? cause.message : error.message
}
