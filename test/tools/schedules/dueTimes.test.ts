import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either } from "effect"
import { catchUp, parseCron } from "../../../src/tools/schedules/dueTimes.js"
import { draftSchedule } from "../../../src/tools/schedules/newSchedule.js"
import { parseWhen } from "../../../src/tools/schedules/whenText.js"

const berlin = DateTime.zoneUnsafeMakeNamed("Europe/Berlin")
const utc = DateTime.zoneUnsafeMakeNamed("UTC")
const minute = 60_000
const hour = 60 * minute
const iso = (ms: number) => new Date(ms).toISOString()
const right = <A>(e: Either.Either<A, string>): A => {
  if (Either.isLeft(e)) throw new Error(e.left)
  return e.right
}
const left = <A>(e: Either.Either<A, string>): string => {
  if (Either.isRight(e)) throw new Error(`expected a refusal, got ${String(e.right)}`)
  return e.left
}

describe("one-shot times", () => {
  // Friday 2026-01-02 10:30 UTC, 11:30 in Berlin.
  const now = Date.UTC(2026, 0, 2, 10, 30)

  it("ISO times: local in the schedule's zone, or at their own offset", () => {
    expect(iso(right(parseWhen("2026-01-05T09:00", now, berlin)))).toBe("2026-01-05T08:00:00.000Z")
    expect(iso(right(parseWhen("2026-07-05 09:00", now, berlin)))).toBe("2026-07-05T07:00:00.000Z")
    expect(iso(right(parseWhen("2026-01-05T09:00Z", now, berlin)))).toBe("2026-01-05T09:00:00.000Z")
    expect(iso(right(parseWhen("2026-01-05T09:00:00+05:00", now, berlin)))).toBe("2026-01-05T04:00:00.000Z")
  })

  it("phrases: in N units, at a time of day a number of days on, today, tomorrow", () => {
    expect(right(parseWhen("in 20 minutes", now, utc))).toBe(now + 20 * minute)
    expect(right(parseWhen("in 2 hours", now, utc))).toBe(now + 2 * hour)
    expect(right(parseWhen("In  1 week", now, utc))).toBe(now + 7 * 24 * hour)
    expect(iso(right(parseWhen("in 3 days at 09:00", now, berlin)))).toBe("2026-01-05T08:00:00.000Z")
    expect(iso(right(parseWhen("tomorrow at 8:30", now, berlin)))).toBe("2026-01-03T07:30:00.000Z")
    expect(iso(right(parseWhen("today at 17:00", now, utc)))).toBe("2026-01-02T17:00:00.000Z")
    // 09:00 has passed today: tomorrow's.
    expect(iso(right(parseWhen("at 09:00", now, utc)))).toBe("2026-01-03T09:00:00.000Z")
    expect(iso(right(parseWhen("at 11:00", now, utc)))).toBe("2026-01-02T11:00:00.000Z")
    // Across the spring change in Berlin: 09:00 local is 07:00 UTC in summer.
    expect(iso(right(parseWhen("in 90 days at 09:00", now, berlin)))).toBe("2026-04-02T07:00:00.000Z")
  })

  it("refuses what it cannot read, times that do not exist, and the past, saying why", () => {
    expect(left(parseWhen("next tuesday", now, utc))).toContain("not a time kern reads")
    expect(left(parseWhen("in 3 fortnights", now, utc))).toContain("not a time kern reads")
    expect(left(parseWhen("in 2 hours at 09:00", now, utc))).toContain("not a time kern reads")
    expect(left(parseWhen("2026-02-30T09:00", now, utc))).toContain("not a real date and time")
    expect(left(parseWhen("today at 25:00", now, utc))).toContain("not a real date and time")
    expect(left(parseWhen("2025-01-01T09:00", now, utc))).toContain("in the past")
  })
})

describe("schedule requests", () => {
  const now = Date.UTC(2026, 0, 2, 10, 30)

  it("a cron's first run in its zone (default the agent's), skip by default; a one-shot runs once by default", () => {
    const cron = right(draftSchedule({ cron: "0 9 * * *", prompt: "brief" }, now, "Europe/Berlin"))
    expect(cron).toMatchObject({ kind: "cron", timezone: "Europe/Berlin", misfire: "skip" })
    expect(iso(cron.nextDueMs)).toBe("2026-01-03T08:00:00.000Z")
    const ny = right(draftSchedule({ cron: "0 9 * * *", timezone: "America/New_York", prompt: "brief" }, now, "Europe/Berlin"))
    expect(iso(ny.nextDueMs)).toBe("2026-01-02T14:00:00.000Z")
    expect(right(draftSchedule({ at: "in 1 hour", prompt: "x" }, now, undefined))).toMatchObject({ kind: "at", timezone: "UTC", misfire: "once", nextDueMs: now + hour })
  })

  it("refuses both or neither of at and cron, a bad cron, an unknown zone, an empty prompt", () => {
    expect(left(draftSchedule({ prompt: "x" }, now, undefined))).toContain("exactly one of at")
    expect(left(draftSchedule({ at: "in 1 hour", cron: "* * * * *", prompt: "x" }, now, undefined))).toContain("exactly one of at")
    expect(left(draftSchedule({ cron: "61 * * * *", prompt: "x" }, now, undefined))).toMatch(/^cron "61 \* \* \* \*": /)
    expect(left(draftSchedule({ cron: "* * * * *", timezone: "Mars/Base", prompt: "x" }, now, undefined))).toContain("not an IANA time zone")
    expect(left(draftSchedule({ at: "in 1 hour", prompt: "  " }, now, undefined))).toContain("prompt is empty")
  })
})

describe("misfires", () => {
  // Every hour on the hour; the agent was down from 09:30 to 12:10, across the runs at 10, 11 and 12.
  const cron = right(parseCron("0 * * * *", "UTC"))
  const at = (h: number, m = 0) => Date.UTC(2026, 0, 2, h, m)
  const down = { cron, nextDueMs: at(10), graceMs: 24 * hour }
  const tolerance = minute

  it("on time: the run fires, the next is an hour on", () => {
    expect(catchUp({ ...down, misfire: "skip" }, at(10, 0), tolerance)).toEqual({
      fire: [{ dueMs: at(10), late: false }],
      missed: [],
      missedCount: 0,
      next: at(11)
    })
  })

  it("skip: the three runs missed while down are recorded, none fires", () => {
    expect(catchUp({ ...down, misfire: "skip" }, at(12, 10), tolerance)).toEqual({ fire: [], missed: [at(10), at(11), at(12)], missedCount: 3, next: at(13) })
  })

  it("once: the latest fires late, the others are missed", () => {
    expect(catchUp({ ...down, misfire: "once" }, at(12, 10), tolerance)).toEqual({
      fire: [{ dueMs: at(12), late: true }],
      missed: [at(10), at(11)],
      missedCount: 2,
      next: at(13)
    })
  })

  it("all: each fires late within the grace window; older ones are missed", () => {
    expect(catchUp({ ...down, misfire: "all" }, at(12, 10), tolerance).fire).toEqual([
      { dueMs: at(10), late: true },
      { dueMs: at(11), late: true },
      { dueMs: at(12), late: true }
    ])
    expect(catchUp({ ...down, misfire: "all", graceMs: 90 * minute }, at(12, 10), tolerance)).toEqual({
      fire: [{ dueMs: at(11), late: true }, { dueMs: at(12), late: true }],
      missed: [at(10)],
      missedCount: 1,
      next: at(13)
    })
  })

  it("back just in time for a run: it fires on time, and what came before goes by the policy", () => {
    expect(catchUp({ ...down, misfire: "once" }, at(12, 0), tolerance)).toEqual({
      fire: [{ dueMs: at(12), late: false }],
      missed: [at(10), at(11)],
      missedCount: 2,
      next: at(13)
    })
  })

  it("a one-shot: on time it fires and is done; late, skip misses it and once fires it", () => {
    const oneShot = { cron: undefined, nextDueMs: at(10), graceMs: 24 * hour }
    expect(catchUp({ ...oneShot, misfire: "skip" }, at(10), tolerance)).toEqual({ fire: [{ dueMs: at(10), late: false }], missed: [], missedCount: 0, next: null })
    expect(catchUp({ ...oneShot, misfire: "skip" }, at(12), tolerance)).toEqual({ fire: [], missed: [at(10)], missedCount: 1, next: null })
    expect(catchUp({ ...oneShot, misfire: "once" }, at(12), tolerance)).toEqual({ fire: [{ dueMs: at(10), late: true }], missed: [], missedCount: 0, next: null })
  })

  it("a month down under an every-minute cron: counted in full, the latest named", () => {
    const everyMinute = right(parseCron("* * * * *", "UTC"))
    const result = catchUp({ cron: everyMinute, nextDueMs: at(0), graceMs: hour, misfire: "skip" }, at(0) + 30 * 24 * hour + 30_000, tolerance)
    expect(result.missedCount).toBe(30 * 24 * 60)
    expect(result.missed.length).toBe(100)
    expect(result.fire).toEqual([{ dueMs: at(0) + 30 * 24 * hour, late: false }])
  })

  it("cron in a zone: 09:00 Berlin is 08:00 UTC in winter and 07:00 in summer", () => {
    const nine = right(parseCron("0 9 * * *", "Europe/Berlin"))
    const winter = catchUp({ cron: nine, nextDueMs: Date.UTC(2026, 2, 28, 8), graceMs: hour, misfire: "skip" }, Date.UTC(2026, 2, 28, 8), tolerance)
    expect(iso(winter.next!)).toBe("2026-03-29T07:00:00.000Z")
  })
})
