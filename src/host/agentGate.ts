import { type FileSystem, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import type { ProcessEnv } from "../config/ProcessEnv.js"
import { Clock, Effect, Layer, Option, Ref } from "effect"
import { apiErrorResponse, badRequest, errorResponse } from "../channels/web/ApiError.js"
import { bearerOf, newSecret, secretHash, secretMatches, sessionLimits } from "../channels/web/auth.js"
import { BrowserSessions } from "../channels/web/BrowserSessions.js"
import { authenticate, type GuardSettings } from "../channels/web/guard.js"
import { ticketMissing, ticketRefused } from "../channels/web/handlers/open.js"
import { asset, indexPage } from "../channels/web/static.js"
import { loadConfig } from "../config/AgentConfig.js"
import * as AgentDatabase from "../runtime/agentDatabase.js"
import type { AgentHandle } from "./AgentHandle.js"

/**
 * What `kern serve` decides before an agent sees a request, so that whoever lacks an agent's credentials learns
 * nothing of which agents are hosted: every `/agents/<name>/…` answers them alike, hosted or not, and wakes nothing.
 *
 * - The web UI's files (`/`, `/index.html`, `/assets/…`, GET or HEAD) hold no data: the host serves them for any
 *   well-formed name, from its own copy of the UI, without waking anyone; the page then asks to log in.
 * - The login link (`/auth?ticket=`): its ticket lives only in the memory of the agent that issued it, live; an agent
 *   not live here (or no agent at all) answers as an agent answers a ticket it never issued.
 * - Every other route needs the agent's own credentials, checked here with the agent's own guard (guard.ts's
 *   authenticate): its token (`.kern/.env`, read again when a presented one differs from the one known), or its browser
 *   session: asked of a live agent's logins, read from a passive agent's kern.db (never written, never woken for).
 *   A name hosted nowhere is checked against a secret nobody has, so its refusal is the very same. Only a caller with
 *   the host's credentials learns that a name is not hosted (404); they can list the agents anyway.
 */

/** The UI's files under an agent's prefix: open, and the same for every name. */
export const isPageFile = (method: string, target: string): boolean => {
  if (method !== "GET" && method !== "HEAD") return false
  const path = target.split("?")[0] ?? ""
  return path === "/" || path === "/index.html" || path.startsWith("/assets/")
}

/** The login link's exchange of a ticket for a browser session (GET /auth). */
export const isLogin = (method: string, target: string): boolean => method === "GET" && target.split("?")[0] === "/auth"

/**
 * What the host answers a login link itself, for every name alike: one without a ticket or with several (400), and
 * one whose ticket no live agent here can hold (401, as an agent answers a ticket it never issued). Only a link with
 * one ticket goes on to a live agent (`malformed` none).
 */
export const loginRefusal = (target: string) => {
  const query = target.indexOf("?")
  const tickets = query === -1 ? [] : new URLSearchParams(target.slice(query + 1)).getAll("ticket")
  const malformed = tickets.length > 1
    ? badRequest("ticket", "ticket: one ticket only")
    : tickets.length === 0 || tickets[0] === ""
    ? ticketMissing
    : undefined
  return {
    malformed: malformed === undefined ? undefined : apiErrorResponse(malformed),
    refused: apiErrorResponse(malformed ?? ticketRefused)
  } as const
}

/**
 * Whether a passive agent's kern.db holds a live browser session for the presented cookie: read as its Logins read it
 * (its hash, within the session limits), and only read: its own guard touches or forgets it once it is awake.
 */
const sleepingSession = (dir: string, presented: string) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(dir)
    const target = yield* AgentDatabase.targetOf(loaded)
    const found = yield* Effect.flatMap(BrowserSessions, (store) => store.find(secretHash(presented))).pipe(
      Effect.provide(BrowserSessions.Default.pipe(Layer.provide(AgentDatabase.layerOf(target))))
    )
    const now = yield* Clock.currentTimeMillis
    return Option.match(found, {
      onNone: () => false,
      onSome: (session) => now - session.lastSeenAtMs < sessionLimits.idleMs && now - session.createdAtMs < sessionLimits.maxAgeMs
    })
  })

export interface AgentGateOptions {
  /** An agent's own token (KERN_AUTH_TOKEN of its folder). */
  readonly agentToken: (dir: string) => Effect.Effect<string, { readonly message: string }>
  /** Origins a browser session's write may come from: the host's own, as for the agents' own guards. */
  readonly trustedOrigins: ReadonlySet<string>
  readonly webRoot: string
}

export const makeAgentGate = (options: AgentGateOptions) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<FileSystem.FileSystem | ProcessEnv>()
    /** Each agent's token as last read, by folder. */
    const tokens = yield* Ref.make<ReadonlyMap<string, string>>(new Map())
    const nobody: GuardSettings = {
      token: newSecret(),
      logins: { isSession: () => Effect.succeed(false) },
      trustedOrigins: options.trustedOrigins,
      corsOrigins: new Set()
    }

    /** The token to check a presented bearer against: the one known, read again when the bearer differs from it. */
    const tokenFor = (dir: string, presented: string | undefined) =>
      Effect.gen(function*() {
        const known = (yield* Ref.get(tokens)).get(dir)
        if (known !== undefined && (presented === undefined || secretMatches(known, presented))) return known
        const read = yield* Effect.either(options.agentToken(dir))
        // A folder whose token cannot be read opens to no token at all (its wake would say why).
        if (read._tag === "Left") return nobody.token
        yield* Ref.update(tokens, (all) => new Map([...all, [dir, read.right]]))
        return read.right
      })

    /** The agent's guard, as the host can run it for `handle` without waking it. */
    const settingsFor = (handle: AgentHandle, request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const live = yield* handle.liveSessions
        return {
          token: yield* tokenFor(handle.dir, bearerOf(request.headers["authorization"])),
          logins: {
            // A live agent's sessions are asked of it (its own guard asks again); a passive one's are read here.
            isSession: (presented: string) =>
              Option.isSome(live)
                ? live.value.isSession(presented).pipe(Effect.orElseSucceed(() => true))
                : sleepingSession(handle.dir, presented).pipe(
                  Effect.provide(context),
                  // Unreadable (its database down): left to the agent, whose wake then says what is wrong.
                  Effect.catchAll((error) =>
                    Effect.as(Effect.logWarning(`kern serve: could not read ${handle.name}'s browser sessions: ${error.message}`), true)
                  )
                )
          },
          trustedOrigins: options.trustedOrigins,
          corsOrigins: new Set<string>()
        } satisfies GuardSettings
      })

    /**
     * Nothing when the request (as the agent is handed it) carries the agent's credentials; otherwise the refusal,
     * the same for a name hosted nowhere (`handle` none) as for any hosted one.
     */
    const refusal = (handle: Option.Option<AgentHandle>, request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const settings = Option.isNone(handle) ? nobody : yield* settingsFor(handle.value, request)
        const checked = yield* Effect.either(authenticate(settings))
        return checked._tag === "Right" ? undefined : apiErrorResponse(checked.left)
      }).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request))

    /** The UI's files, as an agent's own server serves them. */
    const pageFile = (target: string) => {
      const path = target.split("?")[0] ?? "/"
      return path.startsWith("/assets/")
        ? asset(options.webRoot, path).pipe(Effect.catchAll((error) => Effect.succeed(apiErrorResponse(error))))
        : indexPage(options.webRoot).pipe(Effect.orElseSucceed(() => errorResponse(500, { error: "the web UI's page could not be read" })))
    }

    return { refusal, pageFile } as const
  })
