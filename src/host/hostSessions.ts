import { Effect, Option, Ref } from "effect"
import { type BrowserSession, BrowserSessions } from "../channels/web/BrowserSessions.js"
import { makeLogins } from "../channels/web/auth.js"

/**
 * The host page's browser sessions: the agent's login (auth.ts's makeLogins: one-time secret, sessions ended after
 * idle and absolute limits, the least recently seen forgotten first) over a store in memory, since the host has no
 * kern.db of its own. A host restart therefore logs its browsers out of the host page (the agents' own sessions, in
 * their kern.db, stay). The cookie is its own name, so an agent's `kern_session` never reads as a host session.
 */
export const hostCookieName = "kern_host_session"

/** BrowserSessions in memory, keyed by the secret's hash as kern.db keys them. */
export const memorySessions = Effect.map(Ref.make<ReadonlyMap<string, BrowserSession>>(new Map()), (rows) =>
  BrowserSessions.make({
    find: (secretHash) => Effect.map(Ref.get(rows), (all) => Option.fromNullable(all.get(secretHash))),
    insert: (secretHash, nowMs) =>
      Ref.update(rows, (all) => new Map(all).set(secretHash, { secretHash, createdAtMs: nowMs, lastSeenAtMs: nowMs })),
    touch: (secretHash, nowMs) =>
      Ref.update(rows, (all) => {
        const row = all.get(secretHash)
        return row === undefined ? all : new Map(all).set(secretHash, { ...row, lastSeenAtMs: nowMs })
      }),
    remove: (secretHash) =>
      Ref.update(rows, (all) => {
        const next = new Map(all)
        next.delete(secretHash)
        return next
      }),
    prune: (limits) =>
      Ref.update(rows, (all) =>
        new Map(
          [...all]
            .filter(([, row]) => row.lastSeenAtMs > limits.seenBeforeMs && row.createdAtMs > limits.createdBeforeMs)
            .sort(([, a], [, b]) => b.lastSeenAtMs - a.lastSeenAtMs || b.createdAtMs - a.createdAtMs)
            .slice(0, limits.keep)
        ))
  }))

/** The host page's logins: makeLogins over memorySessions. */
export const makeHostLogins = Effect.flatMap(memorySessions, (sessions) => makeLogins().pipe(Effect.provideService(BrowserSessions, sessions)))

/** The host session's cookie: HttpOnly, SameSite=Strict, for the whole server (`/`), as long as the session may live. */
export const hostSessionCookie = (secret: string, maxAgeMs: number) =>
  `${hostCookieName}=${secret}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(maxAgeMs / 1000)}`

/** The cookie a logout answers with: the same one, emptied and expired. */
export const hostCookieCleared = `${hostCookieName}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`

/**
 * A Cookie header without the host session's cookie: what an agent's app is handed, so no agent's code ever sees the
 * host's secret. Undefined when nothing is left.
 */
export const withoutHostCookie = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const kept = header.split(";").filter((part) => {
    const eq = part.indexOf("=")
    return (eq === -1 ? part : part.slice(0, eq)).trim() !== hostCookieName
  })
  const joined = kept.map((part) => part.trim()).filter((part) => part !== "").join("; ")
  return joined === "" ? undefined : joined
}
