import { Clock, Effect, Ref } from "effect"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

/** How long a login ticket from `kern open` works. */
export const ticketTtlMs = 60_000

/** Browser sessions kept at once; the oldest is forgotten first. */
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

/**
 * One-time login tickets and the browser sessions they open. Tickets expire on the Clock (so TestClock drives them)
 * and are gone once redeemed; sessions live as long as the server.
 */
export const makeLogins = (ttlMs: number = ticketTtlMs) =>
  Effect.gen(function*() {
    const tickets = yield* Ref.make<ReadonlyMap<string, number>>(new Map())
    const sessions = yield* Ref.make<ReadonlyArray<string>>([])

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

    /** Exchanges a ticket for a new session id, once; an unknown, used or expired ticket gets nothing. */
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
        yield* Ref.update(sessions, (all) => [...all, session].slice(-maxBrowserSessions))
        return session
      })

    const isSession = (presented: string) =>
      Effect.map(Ref.get(sessions), (all) => all.some((known) => secretMatches(known, presented)))

    return { issue, redeem, isSession } as const
  })

export type Logins = Effect.Effect.Success<ReturnType<typeof makeLogins>>
