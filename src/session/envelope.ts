import { DateTime, Option } from "effect"

/** The agent's timezone (the system's when none is configured or it is unknown). Making one is costly: reuse it. */
export const agentZone = (timezone: string | undefined): DateTime.TimeZone =>
  Option.getOrElse(
    timezone === undefined ? Option.none() : DateTime.zoneMakeNamed(timezone),
    () => DateTime.zoneMakeLocal()
  )

/** UTC ISO time of an instant, as the HTTP API's fields carry it. */
export const isoAt = (epochMs: number): string => DateTime.formatIso(DateTime.unsafeMake(epochMs))

/** Local time with its offset, in a zone (undefined: the system's). */
export const localIso = (epochMs: number, zone: DateTime.TimeZone | string | undefined): string => {
  if (zone === undefined) return systemIso(epochMs).replace(/\.\d{3}(?=[+-Z])/, "")
  const timeZone = typeof zone === "object" ? zone : agentZone(zone)
  const zoned = DateTime.unsafeMakeZoned(epochMs, { timeZone })
  return DateTime.formatIsoOffset(zoned).replace(/\.\d{3}(?=[+-Z])/, "")
}

/** Offsets change (daylight saving time, a new rule) at most once in a quarter of an hour, on the quarter hour. */
const quarterHourMs = 15 * 60 * 1000

const offsetAt = (epochMs: number, zone: DateTime.TimeZone): number =>
  DateTime.zonedOffset(DateTime.unsafeMakeZoned(epochMs, { timeZone: zone }))

/**
 * localIso in one zone, for a service that formats instant after instant in it (each turn's envelope, the spend
 * ledger's day): a named zone's offset comes from Intl (~50 µs an instant), so it is looked up for the quarter hour
 * an instant falls in and kept while instants stay in it. A quarter hour whose start and end have different offsets
 * (a change of offset within it) is never kept: each of its instants is asked of the zone itself.
 */
export const makeZonedIso = (zone: DateTime.TimeZone): (epochMs: number) => string => {
  if (zone._tag === "Offset") return (epochMs) => localIso(epochMs, zone)
  let quarter = Number.NaN
  let fixed: DateTime.TimeZone = zone
  return (epochMs) => {
    const at = Math.floor(epochMs / quarterHourMs)
    if (at !== quarter) {
      const start = offsetAt(at * quarterHourMs, zone)
      if (start !== offsetAt((at + 1) * quarterHourMs - 1, zone)) return localIso(epochMs, zone)
      quarter = at
      fixed = DateTime.zoneMakeOffset(start)
    }
    return localIso(epochMs, fixed)
  }
}

/**
 * What DateTime.formatIsoOffset gives in the system's zone, from Date's own offset (the same zone, ICU's default):
 * a zone made through Intl loads ICU's zone data (~8 MiB, and a tenth of a second of `kern status`'s heartbeat line).
 */
const systemIso = (epochMs: number): string => {
  const offsetMinutes = -new Date(epochMs).getTimezoneOffset()
  const hours = Math.floor(Math.abs(offsetMinutes) / 60)
  const minutes = Math.abs(offsetMinutes) % 60
  const offset = `${offsetMinutes < 0 ? "-" : "+"}${String(hours).padStart(2, "0")}:${String(minutes).padStart(2, "0")}`
  return `${new Date(epochMs + offsetMinutes * 60_000).toISOString().slice(0, -1)}${offset}`
}

/** The line that starts every message the model sees: `[via <interface>, <channel>, user: <id>, time: <local ISO>]`. */
export const envelopeLine = (envelope: {
  readonly interface: string
  readonly channel: string
  readonly userId: string
  /** Local ISO time with its offset, as recorded when the message arrived. */
  readonly time: string
}): string => `[via ${envelope.interface}, ${envelope.channel}, user: ${envelope.userId}, time: ${envelope.time}]`

/** What kern puts before a line of a person's text that could be taken for an envelope. */
export const quotedMarker = "(quoted) "

// A line that, to a reader, starts like an envelope: any opening bracket (fullwidth and other lookalikes are folded by
// NFKC or are \p{Ps}), then "via" in Latin or a lookalike script, with spaces, invisible format characters and
// markdown or quote marks allowed around them (a line inside a code fence is a line like any other).
const envelopeLike =
  /^[\s\p{Cf}>*_`~#|-]*\p{Ps}[\s\p{Cf}]*[vνѵⅴ∨ᴠ][\p{Cf}]*[iіɪιӏı1l|¡][\p{Cf}]*[aаɑα]/iu

// Every character a model may read as a line break.
const lineBreak = /(\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029])/

/**
 * A person's text with every line that could pass for an envelope marked `(quoted) `: only kern writes the envelope,
 * always as the message's first line, so a user cannot make a message look as if the operator sent it.
 */
export const quoteEnvelopeLines = (text: string): string => {
  const pieces = text.split(lineBreak)
  let changed = false
  for (let i = 0; i < pieces.length; i += 2) {
    const line = pieces[i]!
    if (envelopeLike.test(line.normalize("NFKC"))) {
      pieces[i] = `${quotedMarker}${line}`
      changed = true
    }
  }
  return changed ? pieces.join("") : text
}

/** A user's message as the model reads it: kern's envelope line, then the text with any imitation of one quoted. */
export const envelopedText = (
  envelope: Parameters<typeof envelopeLine>[0] | undefined,
  text: string
): string => envelope === undefined ? quoteEnvelopeLines(text) : `${envelopeLine(envelope)}\n${quoteEnvelopeLines(text)}`

/** A reply that is, or ends with, NO_REPLY is not delivered to anyone. */
export const isNoReply = (text: string): boolean => /(^|\s)NO_REPLY\s*$/.test(text.trim())
