import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { bearerOf, cookieOf, makeLogins, secretMatches, ticketTtlMs } from "../../../src/channels/web/auth.js"

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
    }))

  it.effect("a ticket expires 60 s after it was made (on the Clock)", () =>
    Effect.gen(function*() {
      const logins = yield* makeLogins()
      const early = yield* logins.issue
      const late = yield* logins.issue
      yield* TestClock.adjust(ticketTtlMs - 1)
      expect(yield* logins.redeem(early.ticket)).toBeTypeOf("string")
      yield* TestClock.adjust(1)
      expect(yield* logins.redeem(late.ticket)).toBeUndefined()
    }))

  it.effect("an unknown ticket, or one that differs by a character, opens nothing", () =>
    Effect.gen(function*() {
      const logins = yield* makeLogins()
      const { ticket } = yield* logins.issue
      const flipped = ticket.slice(0, -1) + (ticket.endsWith("A") ? "B" : "A")
      expect(yield* logins.redeem(flipped)).toBeUndefined()
      expect(yield* logins.redeem("")).toBeUndefined()
      // The real one still works: a wrong guess does not burn it.
      expect(yield* logins.redeem(ticket)).toBeTypeOf("string")
    }))
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
