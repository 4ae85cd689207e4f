import { Clock, Effect, Option, Ref } from "effect"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { BrowserSessions } from "./BrowserSessions.js"

/** How long a login ticket from `kern open` works. */
export const ticketTtlMs = 60_000

/** Browser sessions kept at once; the least recently seen is forgotten first. */
export const maxBrowserSessions = 64

export const cookieName = "kern_session"

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest()

/**
 * Whether a presented secret is the expected one, in time that does not depend on where they differ: both are hashed
 * first, so the comparison is always of 32 bytes and their lengths are not revealed either.
 */
export const secretMatches = (expected: string, presented: string): boolean =>
  timingSafeEqual(digest(expected), digest(presented))

/**
 * Secrets a browser or script must not guess (tokens, tickets, session ids): from the OS's CSPRNG, not Effect's
 * Random, which is seedable and made for reproducible tests, not for secrets.
 */
export const newSecret = (bytes = 32): string => randomBytes(bytes).toString("base64url")

/** `Authorization: Bearer <token>`, or nothing. */
export const bearerOf = (header: string | undefined): string | undefined => {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match?.[1]
}

/** A cookie's value from a `Cookie` header, or nothing. */
export const cookieOf = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** What a browser session is allowed: how long unused, how long at most, how many at once. */
export interface SessionLimits {
  /** A session unused this long is over (the browser must log in again). */
  readonly idleMs: number
  /** A session is over this long after its login, however much it is used. */
  readonly maxAgeMs: number
  /** Sessions kept at once; the least recently seen is forgotten first. */
  readonly max: number
}

const hourMs = 60 * 60 * 1000

/** Browser sessions: 7 days unused, 30 days at most, 64 at once. */
export const sessionLimits: SessionLimits = { idleMs: 7 * 24 * hourMs, maxAgeMs: 30 * 24 * hourMs, max: maxBrowserSessions }

/** A session's last use is written at most this often, not on every request (the event stream polls /status). */
export const sessionTouchMs = 60_000

/** What kern.db keeps of a session secret: its SHA-256, so the database never holds a cookie a browser could present. */
export const secretHash = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex")

/**
 * One-time login tickets and the browser sessions they open. Tickets live in memory for a minute and are gone once
 * redeemed; sessions are kept in kern.db (BrowserSessions) so a restart of the agent keeps its browsers logged in,
 * and end after `idleMs` unused or `maxAgeMs` after the login, on the Clock (so TestClock drives both).
 */
export const makeLogins = (options: { readonly ticketTtlMs?: number | undefined; readonly limits?: SessionLimits | undefined } = {}) =>
  Effect.gen(function*() {
    const store = yield* BrowserSessions
    const ttlMs = options.ticketTtlMs ?? ticketTtlMs
    const limits = options.limits ?? sessionLimits
    const tickets = yield* Ref.make<ReadonlyMap<string, number>>(new Map())

    const issue = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const ticket = newSecret()
      const expiresAtMs = now + ttlMs
      yield* Ref.update(tickets, (all) => {
        const kept = new Map([...all].filter(([, expires]) => expires > now))
        kept.set(ticket, expiresAtMs)
        return kept
      })
      return { ticket, expiresAtMs }
    })

    /** Exchanges a ticket for a new session secret, once; an unknown, used or expired ticket gets nothing. */
    const redeem = (ticket: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const expires = yield* Ref.modify(tickets, (all): readonly [number | undefined, ReadonlyMap<string, number>] => {
          const found = [...all].find(([known]) => secretMatches(known, ticket))
          if (found === undefined) return [undefined, all]
          const rest = new Map(all)
          rest.delete(found[0])
          return [found[1], rest]
        })
        if (expires === undefined || expires <= now) return undefined
        const session = newSecret()
        yield* store.insert(secretHash(session), now)
        yield* store.prune({ seenBeforeMs: now - limits.idleMs, createdBeforeMs: now - limits.maxAgeMs, keep: limits.max })
        return session
      })

    /** Whether a presented cookie is a live session; one past a limit is forgotten. */
    const isSession = (presented: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const hash = secretHash(presented)
        const found = yield* store.find(hash)
        if (Option.isNone(found)) return false
        const session = found.value
        if (now - session.lastSeenAtMs >= limits.idleMs || now - session.createdAtMs >= limits.maxAgeMs) {
          yield* store.remove(hash)
          return false
        }
        if (now - session.lastSeenAtMs >= sessionTouchMs) yield* store.touch(hash, now)
        return true
      })

    /** Ends a session (a logout): the presented cookie opens nothing after this. */
    const end = (presented: string) => store.remove(secretHash(presented))

    return { issue, redeem, isSession, end, limits } as const
  })

export type Logins = Effect.Effect.Success<ReturnType<typeof makeLogins>>
