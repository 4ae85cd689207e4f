import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { runCollected } from "../support/cli.js"

// localIso in the system's zone reads Date's offset rather than making an Intl zone (ICU's zone data: a tenth of a
// second of `kern status`). It must say what the Intl zone says: checked in a process of its own, whose TZ it sets
// (a zone with half-hour DST, one 5:45 ahead, one 2:30 behind in summer), at every quarter hour around each DST change.
const script = `
import { DateTime } from "effect"
import { localIso } from "./src/session/envelope.ts"
const instants = []
for (const start of [Date.UTC(2026, 2, 28), Date.UTC(2026, 3, 4), Date.UTC(2026, 9, 3), Date.UTC(2026, 9, 24), Date.UTC(2026, 10, 1), Date.UTC(2027, 0, 1)]) {
  for (let ms = start; ms < start + 3 * 24 * 3600_000; ms += 15 * 60_000) instants.push(ms + 123)
}
const mismatches = []
for (const tz of ["Europe/Berlin", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe", "America/Sao_Paulo", "UTC"]) {
  process.env.TZ = tz
  const zone = DateTime.zoneMakeLocal()
  for (const ms of instants) {
    const viaIntl = DateTime.formatIsoOffset(DateTime.unsafeMakeZoned(ms, { timeZone: zone })).replace(/\\.\\d{3}(?=[+-Z])/, "")
    const fast = localIso(ms, undefined)
    if (fast !== viaIntl) mismatches.push(tz + " " + ms + ": " + fast + " vs " + viaIntl)
  }
}
console.log(JSON.stringify({ checked: instants.length * 6, mismatches: mismatches.slice(0, 5) }))
`

describe("localIso in the system's zone", () => {
  it.live("says what the Intl zone says, in zones with odd offsets and DST changes", () =>
    Effect.gen(function*() {
      const result = yield* Effect.promise(() =>
        runCollected(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
          cwd: NodePath.resolve(import.meta.dirname, "../..")
        })
      )
      expect(result.status, result.stderr).toBe(0)
      const { checked, mismatches } = JSON.parse(result.stdout) as { checked: number; mismatches: ReadonlyArray<string> }
      expect(checked).toBeGreaterThan(1000)
      expect(mismatches).toEqual([])
    }))
})
