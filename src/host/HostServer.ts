import { HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Clock, Effect, Layer, Option } from "effect"
import * as NodeHttp from "node:http"
import { errorResponse } from "../channels/web/ApiError.js"
import { bearerOf, secretMatches } from "../channels/web/auth.js"
import { securityHeaders, withHeaders } from "../channels/web/guard.js"
import { headerValues, hostNames, hostRefusal } from "../channels/web/requestGate.js"
import { ServerSetupError } from "../channels/web/serverSetup.js"
import type { AgentInfo } from "./AgentHandle.js"
import type { HostDebug } from "./hostDebug.js"
import { HostAgents } from "./HostAgents.js"
import { door } from "./hostDoor.js"

export interface HostServerOptions {
  readonly host: string
  readonly token: string
  readonly startedAtMs: number
  /** With KERN_DEBUG_HOST=1 (hostDebug.ts): `GET /host` carries `debug`, the event loop's delay since its previous read. */
  readonly debug?: HostDebug | undefined
}

const json = (status: number, body: unknown) => HttpServerResponse.unsafeJson(body, { status })

export const agentsBody = (agents: ReadonlyArray<AgentInfo>) => ({
  agents: agents.map((a) => ({ name: a.name, state: a.state, ...(a.problem === undefined ? {} : { problem: a.problem }) }))
})

/**
 * The host's server: every request through the door (hostDoor.ts) after the Host check every kern server makes; the
 * host's own routes (`GET /agents`, `GET /host`) behind the host token; an agent's routes to that agent's own app,
 * whose gate and guard (its own token, its browser sessions) decide as they do under `kern start`. The host token is
 * not an agent's: on an agent's route it is a wrong token.
 */
export const makeHostApp = (options: HostServerOptions) =>
  Effect.gen(function*() {
    const agents = yield* HostAgents
    const hosts = hostNames(options.host)

    const hostAuthorized = (request: HttpServerRequest.HttpServerRequest) => {
      const bearer = bearerOf(request.headers["authorization"])
      return bearer !== undefined && secretMatches(options.token, bearer)
    }

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
        case "Agents":
        case "Host": {
          if (request.method !== "GET") return withHeaders(errorResponse(405, { error: `${request.method} is not allowed here` }), securityHeaders)
          if (!hostAuthorized(request)) {
            return withHeaders(errorResponse(401, { error: "the host's routes need Authorization: Bearer <host token> (KERN_HOST_TOKEN)" }), securityHeaders)
          }
          const list = yield* agents.list
          if (route._tag === "Agents") return withHeaders(json(200, agentsBody(list)), securityHeaders)
          const count = (state: string) => list.filter((a) => a.state === state).length
          return withHeaders(
            json(200, {
              pid: process.pid,
              startedAt: new Date(options.startedAtMs).toISOString(),
              uptimeMs: (yield* Clock.currentTimeMillis) - options.startedAtMs,
              agents: { total: list.length, live: count("live"), waking: count("waking"), passive: count("passive") },
              rssBytes: process.memoryUsage().rss,
              ...(options.debug === undefined ? {} : { debug: yield* options.debug.take })
            }),
            securityHeaders
          )
        }
        case "Agent": {
          const found = yield* agents.handle(route.name)
          if (Option.isNone(found)) return withHeaders(errorResponse(404, { error: `no agent ${route.name} is hosted here` }), securityHeaders)
          return yield* found.value.serve(request.modify({ url: route.target })).pipe(
            Effect.catchTag("HostAgentError", (error) =>
              Effect.succeed(withHeaders(errorResponse(error.reason === "unavailable" ? 503 : 404, { error: error.message }), securityHeaders)))
          )
        }
      }
    })
  })

/** The host's server on host:port until the scope closes; open event streams are dropped first, as an agent's are. */
export const layer = (options: HostServerOptions & { readonly port: number }) =>
  Layer.unwrapScoped(Effect.sync(() => {
    const server = NodeHttp.createServer()
    const listen = NodeHttpServer.layer(() => server, { host: options.host, port: options.port }).pipe(
      Layer.mapError((error) => new ServerSetupError({ message: `could not listen on ${options.host}:${options.port}: ${error.message}` }))
    )
    const dropConnections = Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections())))
    const serve = Layer.unwrapScoped(Effect.map(makeHostApp(options), (app) => HttpServer.serve(app)))
    return Layer.merge(serve, dropConnections).pipe(Layer.provideMerge(listen))
  }))
