import { describe, expect, it } from "@effect/vitest"
import { spendDay, spendDayIn, spendZone } from "../../src/model/spendCaps.js"

// `kern status` names today's spend day without making a zone through Intl when the agent has none (spendDayIn):
// the same day spendDay gives in the agent's zone, the system's or a named one, on either side of midnight there.
describe("spendDayIn", () => {
  const instants = [
    Date.UTC(2026, 0, 1, 0, 0, 0),
    Date.UTC(2026, 0, 1, 23, 59, 59, 999),
    Date.UTC(2026, 2, 29, 0, 30),
    Date.UTC(2026, 5, 30, 22, 15),
    Date.UTC(2026, 9, 25, 1, 0),
    Date.UTC(2026, 11, 31, 12, 0)
  ]

  it("is spendDay in the system's zone", () => {
    for (const ms of instants) expect(spendDayIn(ms, undefined), new Date(ms).toISOString()).toBe(spendDay(ms, spendZone(undefined)))
  })

  it("is spendDay in a named zone, whose day differs from UTC's near midnight", () => {
    for (const zone of ["Pacific/Kiritimati", "America/Los_Angeles", "Asia/Kolkata", "UTC"]) {
      for (const ms of instants) expect(spendDayIn(ms, zone), `${zone} ${new Date(ms).toISOString()}`).toBe(spendDay(ms, spendZone(zone)))
    }
    expect(spendDayIn(Date.UTC(2026, 0, 1, 23, 0), "Pacific/Kiritimati")).toBe("2026-01-02")
    expect(spendDayIn(Date.UTC(2026, 0, 1, 3, 0), "America/Los_Angeles")).toBe("2025-12-31")
  })
})
