import { assert, describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { isNoteName, localDate, noteDateOf } from "../../src/memory/notes.js"
import { edit } from "../../src/tools/edit.js"
import { read } from "../../src/tools/read.js"
import { write } from "../../src/tools/write.js"
import { inSession, makeWorkspace, readText, toolsLayer } from "../tools/support.js"

const zone = (name: string) => DateTime.zoneUnsafeMakeNamed(name)

// 2026-01-02 23:30 UTC: already the 3rd in Berlin, still the 2nd in Los Angeles.
const instant = Date.UTC(2026, 0, 2, 23, 30)

const notes = {
  "notes/2026-01-01.md": "old day\n",
  "notes/2026-01-02.md": "second day\n",
  "notes/2026-01-03.md": "third day\n",
  "notes/ideas.md": "not a note\n",
  "notes/old/2020-01-01.md": "archived\n",
  "notes/2025-01-01.txt": "not a note either\n"
}

const inZone = <A, E, R>(root: string, name: string, effect: Effect.Effect<A, E, R>) =>
  Effect.zipRight(TestClock.setTime(instant), effect).pipe(
    inSession(),
    Effect.provide(toolsLayer(root, { zone: zone(name) }, { memoryDb: true }))
  )

/** Reads the file, then writes it; the failure's message, or "ok". */
const rewrite = (path: string) =>
  Effect.gen(function*() {
    yield* read({ path, offset: 1, limit: 100 }).pipe(Effect.ignore)
    return yield* write({ path, content: "changed\n" }).pipe(Effect.as("ok"), Effect.catchAll((error) => Effect.succeed(error.message)))
  })

const change = (path: string) =>
  Effect.gen(function*() {
    yield* read({ path, offset: 1, limit: 100 }).pipe(Effect.ignore)
    return yield* edit({ path, oldString: "day", newString: "DAY", replaceAll: false }).pipe(
      Effect.as("ok"),
      Effect.catchAll((error) => Effect.succeed(error.message))
    )
  })

describe("daily notes", () => {
  it("only notes/YYYY-MM-DD.md with a real date is a note", () => {
    for (const name of ["2026-01-02.md", "2024-02-29.md"]) expect(isNoteName(name)).toBe(true)
    for (const name of ["2026-02-30.md", "2025-02-29.md", "2026-1-2.md", "2026-01-02.txt", "ideas.md", "2026-01-02.md.bak"]) {
      expect(isNoteName(name)).toBe(false)
    }
    expect(noteDateOf(NodePath.join("notes", "2026-01-02.md"))).toBe("2026-01-02")
    expect(noteDateOf(NodePath.join("notes", "old", "2026-01-02.md"))).toBeUndefined()
    expect(noteDateOf("2026-01-02.md")).toBeUndefined()
  })

  it("the date of an instant depends on the zone, at both sides of midnight", () => {
    expect(localDate(instant, zone("UTC"))).toBe("2026-01-02")
    expect(localDate(instant, zone("Europe/Berlin"))).toBe("2026-01-03")
    expect(localDate(instant, zone("America/Los_Angeles"))).toBe("2026-01-02")
    expect(localDate(Date.UTC(2026, 0, 2, 22, 59, 59, 999), zone("Europe/Berlin"))).toBe("2026-01-02")
    expect(localDate(Date.UTC(2026, 0, 2, 23, 0), zone("Europe/Berlin"))).toBe("2026-01-03")
    expect(localDate(Date.UTC(2026, 0, 2, 13, 59), zone("Pacific/Kiritimati"))).toBe("2026-01-03")
  })

  it.effect("in Berlin it is the 3rd: write and edit refuse the 1st's and 2nd's notes, allow today's and tomorrow's", () => {
    const root = makeWorkspace(notes)
    return inZone(root, "Europe/Berlin", Effect.gen(function*() {
      for (const past of ["notes/2026-01-01.md", "notes/2026-01-02.md"]) {
        const refused = yield* rewrite(past)
        expect(refused).toContain(`${past} is the note of a previous day (today is 2026-01-03 in Europe/Berlin)`)
        expect(refused).toContain("notes/2026-01-03.md")
        expect(yield* change(past)).toContain("is the note of a previous day")
      }
      // A new file under an old date is refused as well: the day is over.
      expect(yield* write({ path: "notes/2025-12-31.md", content: "late\n" }).pipe(Effect.flip, Effect.map((e) => e.message)))
        .toContain("previous day")
      expect(yield* change("notes/2026-01-03.md")).toBe("ok")
      expect(yield* write({ path: "notes/2026-01-04.md", content: "plan\n" }).pipe(Effect.as("ok"))).toBe("ok")
      for (const other of ["notes/ideas.md", "notes/old/2020-01-01.md", "notes/2025-01-01.txt"]) expect(yield* rewrite(other)).toBe("ok")
      assert.strictEqual(readText(root, "notes/2026-01-01.md"), "old day\n")
      assert.strictEqual(readText(root, "notes/2026-01-02.md"), "second day\n")
      assert.strictEqual(readText(root, "notes/2026-01-03.md"), "third DAY\n")
      assert.isFalse(NodeFs.existsSync(NodePath.join(root, "notes/2025-12-31.md")))
    }))
  })

  it.effect("in Los Angeles the same instant is still the 2nd: its note is writable, the 1st's is not", () => {
    const root = makeWorkspace(notes)
    return inZone(root, "America/Los_Angeles", Effect.gen(function*() {
      expect(yield* change("notes/2026-01-02.md")).toBe("ok")
      expect(yield* rewrite("notes/2026-01-03.md")).toBe("ok")
      expect(yield* rewrite("notes/2026-01-01.md")).toContain("today is 2026-01-02 in America/Los_Angeles")
    }))
  })

  it.effect("another way of naming an old note is refused too: ./, .. and a symlink to it", () => {
    const root = makeWorkspace(notes)
    NodeFs.symlinkSync(NodePath.join(root, "notes/2026-01-01.md"), NodePath.join(root, "today.md"))
    return inZone(root, "Europe/Berlin", Effect.gen(function*() {
      for (const alias of ["./notes/2026-01-01.md", "notes/old/../2026-01-01.md", NodePath.join(root, "notes/2026-01-01.md"), "today.md"]) {
        expect(yield* rewrite(alias), alias).toContain("is the note of a previous day")
      }
      assert.strictEqual(readText(root, "notes/2026-01-01.md"), "old day\n")
    }))
  })
})
