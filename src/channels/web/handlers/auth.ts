import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { isoAt } from "../../../session/envelope.js"
import { Forbidden } from "../ApiError.js"
import { Principal } from "../guard.js"
import { KernApi } from "../KernApi.js"
import { BrowserLogins, ServerInfo } from "../ServerInfo.js"

/** Login tickets for `kern open`. */
export const layer = HttpApiBuilder.group(KernApi, "auth", (handlers) =>
  Effect.gen(function*() {
    const logins = yield* BrowserLogins
    const server = yield* ServerInfo
    return handlers.handle("ticket", () =>
      Effect.gen(function*() {
        // A browser session must not mint more logins: only the token holder (the CLI) may.
        if ((yield* Principal) !== "token") return yield* new Forbidden({ error: "tickets are issued to the bearer token only" })
        const issued = yield* logins.issue
        return { ticket: issued.ticket, url: `${server.baseUrl}/auth?ticket=${issued.ticket}`, expiresAt: isoAt(issued.expiresAtMs) }
      }))
  }))
