import { DateTime, Either, Option } from "effect"

/**
 * When a one-shot is due, from what a person or a model writes: an ISO time (`2026-12-01T09:00`, read in the
 * schedule's zone unless it names its own offset: `…Z`, `…+01:00`), or a phrase: `in 20 minutes`, `in 2 hours`,
 * `in 3 days at 09:00`, `in 1 week`, `tomorrow at 8:30`, `today at 17:00`, `at 17:00` (today, or tomorrow once it has
 * passed). Anything else is refused with the forms it takes; so is a time in the past.
 */
export const whenForms =
  "an ISO time (2026-12-01T09:00, in the schedule's timezone unless it ends in Z or an offset), " +
  "\"in N minutes|hours|days|weeks\" (days and weeks may add \"at HH:MM\"), \"tomorrow at HH:MM\", \"today at HH:MM\" or \"at HH:MM\""

const minute = 60_000
const unitMs = { minute, hour: 60 * minute, day: 24 * 60 * minute, week: 7 * 24 * 60 * minute } as const

const units: ReadonlyArray<readonly [RegExp, keyof typeof unitMs]> = [
  [/^(m|min|mins|minute|minutes)$/, "minute"],
  [/^(h|hr|hrs|hour|hours)$/, "hour"],
  [/^(d|day|days)$/, "day"],
  [/^(w|wk|wks|week|weeks)$/, "week"]
]

const isoLocal = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{1,2}):(\d{2})(?::(\d{2}))?$/
const isoOffset = /^\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})$/i
const clock = /^(\d{1,2}):(\d{2})$/

/** A wall-clock time in a zone, or none when it is not a real one. */
const wallTime = (zone: DateTime.TimeZone, year: number, month: number, day: number, hours: number, minutes: number, seconds = 0) => {
  if (month < 1 || month > 12 || day < 1 || day > 31 || hours > 23 || minutes > 59 || seconds > 59) return Option.none<number>()
  const check = new Date(Date.UTC(year, month - 1, day))
  if (check.getUTCDate() !== day) return Option.none<number>()
  return Option.some(DateTime.toEpochMillis(
    DateTime.unsafeMakeZoned({ year, month, day, hours, minutes, seconds }, { timeZone: zone, adjustForTimeZone: true })
  ))
}

/** The calendar day `days` after `nowMs`'s day in the zone, at hh:mm there. */
const dayAt = (zone: DateTime.TimeZone, nowMs: number, days: number, hhmm: string) => {
  const m = clock.exec(hhmm)
  if (m === null) return Option.none<number>()
  const parts = DateTime.toParts(DateTime.unsafeMakeZoned(nowMs, { timeZone: zone }))
  const date = new Date(Date.UTC(parts.year, parts.month - 1, parts.day + days))
  return wallTime(zone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), Number(m[1]), Number(m[2]))
}

const refused = (text: string, why: string) => Either.left(`at ${JSON.stringify(text)}: ${why}`)

/** The epoch time `text` names, at `nowMs` in `zone`; a message naming the problem otherwise. */
export const parseWhen = (text: string, nowMs: number, zone: DateTime.TimeZone): Either.Either<number, string> => {
  const t = text.trim().toLowerCase().replace(/\s+/g, " ")
  const found = ((): Option.Option<number> | "unknown" => {
    if (isoOffset.test(t)) {
      const ms = Date.parse(t.toUpperCase().replace(" ", "T"))
      return Number.isNaN(ms) ? Option.none() : Option.some(ms)
    }
    const iso = isoLocal.exec(t)
    if (iso !== null) {
      const [, y, mo, d, h, mi, s] = iso
      return wallTime(zone, Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s ?? 0))
    }
    const relative = /^in (\d{1,4}) ([a-z]+)(?: at (\d{1,2}:\d{2}))?$/.exec(t)
    if (relative !== null) {
      const [, n, word, at] = relative
      const unit = units.find(([pattern]) => pattern.test(word!))?.[1]
      if (unit === undefined) return "unknown"
      if (at === undefined) return Option.some(nowMs + Number(n) * unitMs[unit])
      if (unit === "minute" || unit === "hour") return "unknown"
      return dayAt(zone, nowMs, Number(n) * (unit === "week" ? 7 : 1), at)
    }
    const named = /^(today|tomorrow) at (\d{1,2}:\d{2})$/.exec(t)
    if (named !== null) return dayAt(zone, nowMs, named[1] === "tomorrow" ? 1 : 0, named[2]!)
    const bare = /^at (\d{1,2}:\d{2})$/.exec(t)
    if (bare !== null) {
      return Option.flatMap(dayAt(zone, nowMs, 0, bare[1]!), (today) => today > nowMs ? Option.some(today) : dayAt(zone, nowMs, 1, bare[1]!))
    }
    return "unknown"
  })()
  if (found === "unknown") return refused(text, `not a time kern reads; give ${whenForms}`)
  if (Option.isNone(found)) return refused(text, "not a real date and time")
  if (found.value < nowMs) return refused(text, `that is in the past (it is ${new Date(nowMs).toISOString()} now)`)
  return Either.right(found.value)
}

/** A named IANA time zone, or why not. */
export const parseZone = (name: string): Either.Either<DateTime.TimeZone, string> =>
  Option.match(DateTime.zoneMakeNamed(name), {
    onNone: () => Either.left(`timezone ${JSON.stringify(name)} is not an IANA time zone (e.g. "Europe/Berlin", "UTC")`),
    onSome: Either.right
  })
