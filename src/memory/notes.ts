import { FileSystem } from "@effect/platform"
import { Clock, DateTime, Effect } from "effect"
import * as NodePath from "node:path"
import { toolFailure } from "../kernel/ToolFailure.js"
import { orIfMissing } from "../storage/missingFile.js"

/** Only `notes/YYYY-MM-DD.md` is a daily note; anything else in notes/ is the agent's own business. */
export const notePattern = /^(\d{4})-(\d{2})-(\d{2})\.md$/

/** Whether a file name is a real calendar date followed by `.md` (2026-02-30.md is not). */
export const isNoteName = (name: string): boolean => {
  const match = notePattern.exec(name)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/** The calendar date (YYYY-MM-DD) of an instant in a zone. */
export const localDate = (epochMs: number, zone: DateTime.TimeZone): string =>
  DateTime.formatIsoDate(DateTime.unsafeMakeZoned(epochMs, { timeZone: zone }))

/** Today's date in the agent's zone, on the Clock. */
export const today = (zone: DateTime.TimeZone) => Effect.map(Clock.currentTimeMillis, (now) => localDate(now, zone))

/** The date of a daily note, given its path relative to the agent folder; undefined for any other file. */
export const noteDateOf = (relative: string): string | undefined => {
  const parts = relative.split(NodePath.sep)
  return parts.length === 2 && parts[0] === "notes" && isNoteName(parts[1]!) ? parts[1]!.slice(0, 10) : undefined
}

/**
 * A previous day's note is history: refuses to change one dated before today in the agent's zone. Today's note and
 * later ones are writable. `relative` is the path from the agent folder, `display` how to name it.
 */
export const refusePastNote = (relative: string, display: string, zone: DateTime.TimeZone) =>
  Effect.gen(function*() {
    const date = noteDateOf(relative)
    if (date === undefined) return
    const now = yield* today(zone)
    if (date < now) {
      return yield* toolFailure(
        "VALIDATION_ERROR",
        `${display} is the note of a previous day (today is ${now} in ${DateTime.zoneToString(zone)}): notes of past ` +
          `days are history and are not changed. Write today's note, notes/${now}.md, instead`
      )
    }
  })

/** The daily notes of an agent folder, oldest first (file names only). */
export const listNotes = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const names = yield* fs.readDirectory(NodePath.join(dir, "notes")).pipe(orIfMissing(() => []))
    return names.filter(isNoteName).sort()
  }).pipe(Effect.withSpan("kern.memory.listNotes"))
