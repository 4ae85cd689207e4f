import { DateTime, Option } from "effect"

export interface EnvelopeFields {
  readonly interface: string
  readonly channel: string
  readonly userId: string
  /** Epoch milliseconds. */
  readonly receivedAtMs: number
}

/** Local time with its offset, in the agent's timezone (the system's when none is configured or it is unknown). */
export const localIso = (epochMs: number, timezone: string | undefined): string => {
  const zone = Option.getOrElse(
    timezone === undefined ? Option.none() : DateTime.zoneMakeNamed(timezone),
    () => DateTime.zoneMakeLocal()
  )
  const zoned = DateTime.unsafeMakeZoned(epochMs, { timeZone: zone })
  return DateTime.formatIsoOffset(zoned).replace(/\.\d{3}(?=[+-Z])/, "")
}

/** The line that starts every message the model sees: `[via <interface>, <channel>, user: <id>, time: <local ISO>]`. */
export const formatEnvelope = (fields: EnvelopeFields, timezone: string | undefined): string =>
  `[via ${fields.interface}, ${fields.channel}, user: ${fields.userId}, time: ${localIso(fields.receivedAtMs, timezone)}]`

/** A reply that is, or ends with, NO_REPLY is not delivered to anyone. */
export const isNoReply = (text: string): boolean => /(^|\s)NO_REPLY\s*$/.test(text.trim()) || text.trim() === "NO_REPLY"
