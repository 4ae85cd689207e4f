import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, TestClock } from "effect"
import { bearerOf, cookieOf, makeLogins, secretHash, secretMatches, sessionLimits, sessionTouchMs, ticketTtlMs } from "../../../src/channels/web/auth.js"
import { BrowserSessions } from "../../../src/channels/web/BrowserSessions.js"
import { databases } from "../../support/databases.js"

/** A ticket issued and redeemed: a live session secret. */
const loggedIn = (logins: Effect.Effect.Success<ReturnType<typeof makeLogins>>) =>
  Effect.flatMap(logins.issue, ({ ticket }) => logins.redeem(ticket)).pipe(
    Effect.flatMap((session) => session === undefined ? Effect.die("the ticket opened no session") : Effect.succeed(session))
  )

// The sessions live in kern.db: every test runs on both databases it can be on.
describe.each(databases)("web logins, kern.db on $dialect", ({ layer }) => {
  const kernDb = BrowserSessions.Default.pipe(Layer.provideMerge(layer))

  describe("login tickets", () => {
    it.effect("a ticket opens one session, once", () =>
      Effect.gen(function*() {
        const logins = yield* makeLogins()
        const { ticket } = yield* logins.issue
        const session = yield* logins.redeem(ticket)
        expect(session).toBeTypeOf("string")
        expect(yield* logins.isSession(session!)).toBe(true)
        expect(yield* logins.redeem(ticket)).toBeUndefined()
        expect(yield* logins.isSession("not-a-session")).toBe(false)
      }).pipe(Effect.provide(kernDb)))

    it.effect("a ticket expires 60 s after it was made (on the Clock)", () =>
      Effect.gen(function*() {
        const logins = yield* makeLogins()
        const early = yield* logins.issue
        const late = yield* logins.issue
        yield* TestClock.adjust(ticketTtlMs - 1)
        expect(yield* logins.redeem(early.ticket)).toBeTypeOf("string")
        yield* TestClock.adjust(1)
        expect(yield* logins.redeem(late.ticket)).toBeUndefined()
      }).pipe(Effect.provide(kernDb)))

    it.effect("an unknown ticket, or one that differs by a character, opens nothing", () =>
      Effect.gen(function*() {
        const logins = yield* makeLogins()
        const { ticket } = yield* logins.issue
        const flipped = ticket.slice(0, -1) + (ticket.endsWith("A") ? "B" : "A")
        expect(yield* logins.redeem(flipped)).toBeUndefined()
        expect(yield* logins.redeem("")).toBeUndefined()
        // The real one still works: a wrong guess does not burn it.
        expect(yield* logins.redeem(ticket)).toBeTypeOf("string")
      }).pipe(Effect.provide(kernDb)))
  })

  describe("browser sessions", () => {
    it("the limits: 7 days unused, 30 days at most", () => {
      expect(sessionLimits.idleMs).toBe(7 * 24 * 60 * 60 * 1000)
      expect(sessionLimits.maxAgeMs).toBe(30 * 24 * 60 * 60 * 1000)
    })

    it.effect("a session unused for the idle limit is over, and stays over", () =>
      Effect.gen(function*() {
        const logins = yield* makeLogins()
        const session = yield* loggedIn(logins)
        yield* TestClock.adjust(sessionLimits.idleMs - 1)
        // Used just before the limit: the idle time starts again from here.
        expect(yield* logins.isSession(session)).toBe(true)
        yield* TestClock.adjust(sessionLimits.idleMs - 1)
        expect(yield* logins.isSession(session)).toBe(true)
        yield* TestClock.adjust(sessionLimits.idleMs)
        expect(yield* logins.isSession(session)).toBe(false)
        // A later request with the same cookie does not bring it back.
        expect(yield* logins.isSession(session)).toBe(false)
      }).pipe(Effect.provide(kernDb)))

    it.effect("a session used all along still ends at the absolute limit after its login", () =>
      Effect.gen(function*() {
        const logins = yield* makeLogins()
        const session = yield* loggedIn(logins)
        const step = sessionLimits.idleMs / 2
        let elapsed = 0
        while (elapsed + step < sessionLimits.maxAgeMs) {
          yield* TestClock.adjust(step)
          elapsed += step
          expect(yield* logins.isSession(session), `after ${elapsed} ms`).toBe(true)
        }
        yield* TestClock.adjust(sessionLimits.maxAgeMs - elapsed)
        expect(yield* logins.isSession(session)).toBe(false)
      }).pipe(Effect.provide(kernDb)))

    it.effect("limits can be set per server; a new login opens a new session", () =>
      Effect.gen(function*() {
        const logins = yield* makeLogins({ limits: { idleMs: 10 * sessionTouchMs, maxAgeMs: 20 * sessionTouchMs, max: 2 } })
        const first = yield* loggedIn(logins)
        yield* TestClock.adjust(10 * sessionTouchMs)
        expect(yield* logins.isSession(first)).toBe(false)
        const second = yield* loggedIn(logins)
        expect(second).not.toBe(first)
        expect(yield* logins.isSession(second)).toBe(true)
      }).pipe(Effect.provide(kernDb)))

    it.effect("kern.db holds the session's hash, never the cookie value; the oldest beyond the cap is forgotten", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const logins = yield* makeLogins({ limits: { ...sessionLimits, max: 3 } })
        const sessions: Array<string> = []
        for (let i = 0; i < 4; i++) {
          sessions.push(yield* loggedIn(logins))
          yield* TestClock.adjust(1000)
        }
        const rows = yield* sql<{ readonly secretHash: string; readonly createdAtMs: number; readonly lastSeenAtMs: number }>`SELECT * FROM browser_sessions`
        expect(rows.map((row) => row.secretHash).sort()).toEqual(sessions.slice(1).map(secretHash).sort())
        const dump = JSON.stringify(rows)
        for (const session of sessions) expect(dump).not.toContain(session)
        expect(yield* logins.isSession(sessions[0]!)).toBe(false)
        for (const session of sessions.slice(1)) expect(yield* logins.isSession(session)).toBe(true)
        // The hash itself is not a cookie.
        expect(yield* logins.isSession(secretHash(sessions[1]!))).toBe(false)
      }).pipe(Effect.provide(kernDb)))
  })
})

describe("credentials", () => {
  it("secrets compare equal only when equal, whatever their lengths", () => {
    expect(secretMatches("abc", "abc")).toBe(true)
    expect(secretMatches("abc", "abd")).toBe(false)
    expect(secretMatches("abc", "abcd")).toBe(false)
    expect(secretMatches("abc", "")).toBe(false)
  })

  it("bearer and cookie parsing", () => {
    expect(bearerOf("Bearer t0k")).toBe("t0k")
    expect(bearerOf("bearer   t0k ")).toBe("t0k")
    expect(bearerOf("Basic dXNlcg==")).toBeUndefined()
    expect(bearerOf("Bearer a b")).toBeUndefined()
    expect(cookieOf("a=1; kern_session=xyz; b=2", "kern_session")).toBe("xyz")
    expect(cookieOf("not_kern_session=xyz", "kern_session")).toBeUndefined()
  })
})
