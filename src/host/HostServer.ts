import { type HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Clock, Effect, Layer, Option } from "effect"
import * as NodeHttp from "node:http"
import { errorResponse } from "../channels/web/ApiError.js"
import { securityHeaders, withHeaders } from "../channels/web/guard.js"
import { headerValues, hostNames, hostRefusal } from "../channels/web/requestGate.js"
import { ServerSetupError } from "../channels/web/serverSetup.js"
import { defaultWebRoot } from "../channels/web/static.js"
import { ownOrigins } from "../channels/web/WebServer.js"
import type { HostAgentError } from "./AgentHandle.js"
import { agentsBody } from "./hostAgentsBody.js"
import type { HostDebug } from "./hostDebug.js"
import { HostAgents } from "./HostAgents.js"
import { door } from "./hostDoor.js"
import * as gate from "./agentGate.js"
import { makeHostPage } from "./hostPage.js"
import { WakeSources } from "./wakeSources/wakeSources.js"

export interface HostServerOptions {
  readonly host: string
  /** The port it listens on: a page of the host has its origin, and only such a page's writes are taken. */
  readonly port: number
  readonly token: string
  readonly startedAtMs: number
  /** An agent's own token (KERN_AUTH_TOKEN of its folder), for the host page's hand-over (hostOpen.ts). */
  readonly agentToken: (dir: string) => Effect.Effect<string, { readonly message: string }>
  /** Where the built web UI is (host.html, assets/); the repo's or the bundle's dist/web by default. */
  readonly webRoot?: string | undefined
  /**
   * Among several runners: serves a request for an agent another runner holds (`elsewhere`), given the agent's name,
   * the target within its routes, and the request as it came (kern serve proxies it to the holder, forward.ts).
   */
  readonly elsewhere?: ((
    name: string,
    target: string,
    request: HttpServerRequest.HttpServerRequest
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, HostAgentError, HttpRouter.HttpRouter.DefaultServices>) | undefined
  /** With KERN_DEBUG_HOST=1 (hostDebug.ts): `GET /host` carries `debug`, the event loop's delay since its previous read. */
  readonly debug?: HostDebug | undefined
}

const json = (status: number, body: unknown) => HttpServerResponse.unsafeJson(body, { status })

export { agentsBody } from "./hostAgentsBody.js"

/**
 * The host's server: every request through the door (hostDoor.ts) after the Host check every kern server makes; the
 * host's own routes (`GET /agents`, `GET /host`, the host page's: hostPage.ts) behind the host token or a host
 * session; an agent's routes to that agent's own app, whose gate and guard (its own token, its browser sessions)
 * decide as they do under `kern start`. The host token is not an agent's: on an agent's route it is a wrong token;
 * the host session's cookie is taken off what an agent's app is handed, and an agent's cookie is no host session.
 */
export const makeHostApp = (options: HostServerOptions) =>
  Effect.gen(function*() {
    const agents = yield* HostAgents
    const wakeSources = yield* WakeSources
    const hosts = hostNames(options.host)
    const page = yield* makeHostPage(options)
    const agentGate = yield* gate.makeAgentGate({
      agentToken: options.agentToken,
      trustedOrigins: new Set(ownOrigins(options.host, options.port)),
      webRoot: options.webRoot ?? defaultWebRoot()
    })

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const host = hostRefusal(hosts, headerValues(NodeHttpServerRequest.toIncomingMessage(request).rawHeaders, "host"))
      if (host !== undefined) return withHeaders(errorResponse(host.status, host), securityHeaders)
      const route = door(request.url)
      switch (route._tag) {
        case "Refused":
          return withHeaders(errorResponse(400, { error: route.error }), securityHeaders)
        case "NotFound":
          return withHeaders(errorResponse(404, { error: `no route ${request.method} ${request.url.split("?")[0]}` }), securityHeaders)
        case "AgentRoot":
          // The page's relative links (assets, API calls) resolve under its base only with the trailing slash.
          return withHeaders(HttpServerResponse.empty({ status: 308, headers: { location: `/agents/${route.name}/` } }), securityHeaders)
        case "HostPage":
        case "HostAsset":
        case "HostLogin":
        case "HostLogout":
        case "HostEvents":
        case "HostOpen":
          return withHeaders(yield* page.serve(route, request), securityHeaders)
        case "Agents":
        case "Host": {
          if (request.method !== "GET") return withHeaders(errorResponse(405, { error: `${request.method} is not allowed here` }), securityHeaders)
          const refused = yield* page.refusal
          if (refused !== undefined) return withHeaders(refused, securityHeaders)
          const list = yield* agents.list
          if (route._tag === "Agents") return withHeaders(json(200, agentsBody(list)), securityHeaders)
          const count = (state: string) => list.filter((a) => a.state === state).length
          const wakes = yield* wakeSources.status
          return withHeaders(
            json(200, {
              pid: process.pid,
              startedAt: new Date(options.startedAtMs).toISOString(),
              uptimeMs: (yield* Clock.currentTimeMillis) - options.startedAtMs,
              agents: {
                total: list.length,
                live: count("live"),
                waking: count("waking"),
                passivating: count("passivating"),
                passive: count("passive")
              },
              // What wakes the passive agents: their due times (schedules, heartbeat) and their Telegram bots.
              wakeSources: {
                passive: wakes.passive,
                due: wakes.due,
                nextDue: Option.match(wakes.nextDueMs, { onNone: () => null, onSome: (ms) => new Date(ms).toISOString() }),
                telegramPollers: wakes.telegramPollers
              },
              // Agents never passivated, and why (Slack's Socket Mode reaches only a connected agent).
              keptLive: list.flatMap((a) => a.keptLive === undefined ? [] : [{ name: a.name, why: a.keptLive }]),
              rssBytes: process.memoryUsage().rss,
              ...(options.debug === undefined ? {} : { debug: yield* options.debug.take })
            }),
            securityHeaders
          )
        }
        case "Agent": {
          // Before any agent sees it (agentGate.ts): the same answers for a name hosted nowhere as for a hosted one.
          if (gate.isPageFile(request.method, route.target)) return withHeaders(yield* agentGate.pageFile(route.target), securityHeaders)
          const found = yield* agents.handle(route.name)
          const forwarded = page.forAgent(request, route.target)
          const login = gate.isLogin(request.method, route.target)
          const loginRefusal = gate.loginRefusal(route.target)
          if (login && loginRefusal.malformed !== undefined) return withHeaders(loginRefusal.malformed, securityHeaders)
          if (Option.isNone(found)) {
            const answer = login
              ? loginRefusal.refused
              : (yield* page.refusal) === undefined
              ? errorResponse(404, { error: `no agent ${route.name} is hosted here` })
              : yield* agentGate.refusal(found, forwarded)
            return withHeaders(answer ?? errorResponse(404, { error: `no agent ${route.name} is hosted here` }), securityHeaders)
          }
          const refused = login ? undefined : yield* agentGate.refusal(found, forwarded)
          if (refused !== undefined) return withHeaders(refused, securityHeaders)
          const elsewhere = options.elsewhere
          return yield* (login ? found.value.serveAwake : found.value.serve)(forwarded).pipe(
            Effect.catchTag("HostAgentError", (error) =>
              error.reason === "asleep" ? Effect.succeed(withHeaders(loginRefusal.refused, securityHeaders)) : Effect.fail(error)),
            Effect.catchTag("HostAgentError", (error) =>
              error.reason === "elsewhere" && elsewhere !== undefined ? elsewhere(route.name, route.target, forwarded) : Effect.fail(error)),
            Effect.catchTag("HostAgentError", (error) =>
              Effect.succeed(withHeaders(errorResponse(error.reason === "unavailable" ? 503 : 404, { error: error.message }), securityHeaders)))
          )
        }
      }
    })
  })

/** The host's server on host:port until the scope closes; open event streams are dropped first, as an agent's are. */
export const layer = (options: HostServerOptions) =>
  Layer.unwrapScoped(Effect.sync(() => {
    const server = NodeHttp.createServer()
    const listen = NodeHttpServer.layer(() => server, { host: options.host, port: options.port }).pipe(
      Layer.mapError((error) => new ServerSetupError({ message: `could not listen on ${options.host}:${options.port}: ${error.message}` }))
    )
    const dropConnections = Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections())))
    const serve = Layer.unwrapScoped(Effect.map(makeHostApp(options), (app) => HttpServer.serve(app)))
    return Layer.merge(serve, dropConnections).pipe(Layer.provideMerge(listen))
  }))
