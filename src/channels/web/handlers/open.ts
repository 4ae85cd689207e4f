import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { AgentConfig } from "../../../config/AgentConfig.js"
import { isoAt } from "../../../session/envelope.js"
import { badRequest, serverError, Unauthorized } from "../ApiError.js"
import { cookieName } from "../auth.js"
import { KernApi } from "../KernApi.js"
import { BrowserLogins, ServerInfo } from "../ServerInfo.js"

/** The cookie lives as long as the session may: a browser restart keeps it, the server decides when it ends. */
const sessionCookie = (id: string, maxAgeMs: number, basePath: string) =>
  `${cookieName}=${id}; HttpOnly; SameSite=Strict; Path=${basePath}/; Max-Age=${Math.floor(maxAgeMs / 1000)}`

/** `/auth` without a ticket. */
export const ticketMissing = badRequest("ticket", "ticket: missing")

/** `/auth` with a ticket that opens nothing: never issued, used, or expired. */
export const ticketRefused = new Unauthorized({ error: "this login link is used or expired: run `kern open` for a new one" })

/** The health check (it holds no data) and the exchange of a one-time login ticket for a browser session. */
export const layer = HttpApiBuilder.group(KernApi, "open", (handlers) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const server = yield* ServerInfo
    const logins = yield* BrowserLogins
    return handlers
      .handle("health", () => Effect.succeed({ ok: true as const, name: config.name, pid: process.pid, startedAt: isoAt(server.startedAtMs) }))
      .handle("login", ({ urlParams }) =>
        Effect.gen(function*() {
          const presented = urlParams.ticket
          if (presented === undefined || presented === "") return yield* ticketMissing
          const session = yield* logins.redeem(presented).pipe(Effect.mapError(serverError))
          if (session === undefined) return yield* ticketRefused
          return HttpServerResponse.empty({
            status: 303,
            headers: {
              location: `${server.basePath}/`,
              "set-cookie": sessionCookie(session, logins.limits.maxAgeMs, server.basePath),
              "cache-control": "no-store"
            }
          })
        }))
  }))
