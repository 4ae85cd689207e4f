import { describe, expect, it } from "@effect/vitest"
import { DateTime, Option } from "effect"
import { makeSpendDay, spendDay } from "../../src/model/spendCaps.js"
import { localIso, makeZonedIso } from "../../src/session/envelope.js"

// makeZonedIso keeps a named zone's offset for the quarter hour an instant falls in: it must say what localIso says
// (Intl, every instant), across each zone's changes of offset (half-hour DST, 5:45 ahead, 2:30 behind in summer, 12:45
// ahead), whether the instants come in order (kept quarters reused) or not (one quarter, then another, then back).
const zones = ["Europe/Berlin", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe", "America/Sao_Paulo", "Pacific/Chatham", "UTC"]
const starts = [Date.UTC(2026, 2, 28), Date.UTC(2026, 3, 4), Date.UTC(2026, 8, 26), Date.UTC(2026, 9, 3), Date.UTC(2026, 9, 24), Date.UTC(2026, 10, 1)]
const instants = starts.flatMap((start) => Array.from({ length: (2 * 24 * 60) / 7 }, (_, i) => start + i * 7 * 60_000 + (i % 1000)))
// Each quarter hour's first and last millisecond too: where a kept offset would start or stop being right.
const edges = starts.flatMap((start) => Array.from({ length: 2 * 24 * 4 }, (_, i) => [start + i * 900_000, start + i * 900_000 - 1]).flat())

const named = (name: string) => Option.getOrThrow(DateTime.zoneMakeNamed(name))

/** The instants where `fast` differs from `slow`, as lines to read (a few). */
const mismatches = (label: string, instants: ReadonlyArray<number>, fast: (ms: number) => string, slow: (ms: number) => string) =>
  instants.flatMap((ms) => {
    const [got, wanted] = [fast(ms), slow(ms)]
    return got === wanted ? [] : [`${label} ${new Date(ms).toISOString()}: ${got} vs ${wanted}`]
  }).slice(0, 5)

describe("makeZonedIso", () => {
  it("says what localIso says, instants in order", () => {
    for (const name of zones) {
      const zone = named(name)
      const ordered = [...instants, ...edges].sort((a, b) => a - b)
      expect(mismatches(name, ordered, makeZonedIso(zone), (ms) => localIso(ms, zone))).toEqual([])
    }
  })

  it("says what localIso says, instants out of order", () => {
    for (const name of zones) {
      const zone = named(name)
      // A fixed shuffle: from one end of the list to the other and back, a quarter hour apart or days apart.
      const mixed = [...instants, ...edges].map((_, i, all) => all[(i * 7919) % all.length]!)
      expect(mismatches(name, mixed, makeZonedIso(zone), (ms) => localIso(ms, zone))).toEqual([])
    }
  })

  it("says what localIso says in a fixed-offset zone", () => {
    const zone = DateTime.zoneMakeOffset(-(9 * 60 + 30) * 60_000)
    expect(mismatches("-09:30", instants, makeZonedIso(zone), (ms) => localIso(ms, zone))).toEqual([])
  })

  it("gives spendDay's day (makeSpendDay), on either side of the zone's midnight", () => {
    for (const name of ["Pacific/Kiritimati", "America/Los_Angeles", "Australia/Lord_Howe"]) {
      const zone = named(name)
      expect(mismatches(name, [...instants, ...edges], makeSpendDay(zone), (ms) => spendDay(ms, zone))).toEqual([])
    }
  })
})
