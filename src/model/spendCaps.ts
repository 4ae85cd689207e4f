import { DateTime } from "effect"
import type { CapName, Limits, Measure, SpendCap } from "../config/limits.js"
import { agentZone, localIso, makeZonedIso } from "../session/envelope.js"
import type { ReachedCap } from "./BudgetExceeded.js"
import type { SpendAttributionData } from "./SpendAttribution.js"
import { centsOfMicroUsd, type SpendEntry, type SpendRow } from "./SpendLedger.js"

/** The ledger's day of an instant: `YYYY-MM-DD` in the agent's timezone (the machine's when none is set). */
export const spendDay = (epochMs: number, zone: DateTime.TimeZone): string =>
  DateTime.formatIsoOffset(DateTime.unsafeMakeZoned(epochMs, { timeZone: zone })).slice(0, 10)

/** spendDay in one zone, for a service that asks it every model call: the zone's offset is kept a quarter hour (makeZonedIso). */
export const makeSpendDay = (zone: DateTime.TimeZone): (epochMs: number) => string => {
  const iso = makeZonedIso(zone)
  return (epochMs) => iso(epochMs).slice(0, 10)
}

export const spendZone = (timezone: string | undefined): DateTime.TimeZone => agentZone(timezone)

/**
 * spendDay in the agent's zone by its name (undefined: the system's), for a process that wants one day and no zone
 * (`kern status`): the system's day from Date's own offset, without the ICU zone data a zone made through Intl loads.
 */
export const spendDayIn = (epochMs: number, timezone: string | undefined): string => localIso(epochMs, timezone).slice(0, 10)

/**
 * The first instant after `epochMs` whose spendDayIn is another day: until then, whatever is shown for today's spend
 * stays today's. Found by halving over the next 27 hours (a day lasts 23 to 25), so it is spendDayIn's own boundary,
 * daylight saving time included.
 */
export const nextSpendDayMs = (epochMs: number, timezone: string | undefined): number => {
  const today = spendDayIn(epochMs, timezone)
  let sameDay = epochMs
  let otherDay = epochMs + 27 * 60 * 60 * 1000
  while (otherDay - sameDay > 1) {
    const middle = sameDay + Math.floor((otherDay - sameDay) / 2)
    if (spendDayIn(middle, timezone) === today) sameDay = middle
    else otherDay = middle
  }
  return otherDay
}

/** A cap a call counts against: which one, its row in the ledger and its values. */
export interface CapAt {
  readonly cap: CapName
  readonly entry: SpendEntry
  readonly values: SpendCap
}

/**
 * The configured caps a call of `who` counts against: the agent's perDay always, perUser and perChannel when the
 * call is someone's (an embedding is the agent's alone).
 */
export const capsFor = (limits: Limits, who: SpendAttributionData): ReadonlyArray<CapAt> => {
  const caps: Array<CapAt> = []
  if (limits.perDay !== undefined) caps.push({ cap: "perDay", entry: { scope: "agent", key: "" }, values: limits.perDay })
  if (limits.perUser !== undefined && who.user !== undefined) {
    caps.push({ cap: "perUser", entry: { scope: "user", key: who.user }, values: limits.perUser })
  }
  if (limits.perChannel !== undefined && who.channel !== undefined) {
    caps.push({ cap: "perChannel", entry: { scope: "channel", key: who.channel }, values: limits.perChannel })
  }
  return caps
}

/** The rows a call's record adds to: the agent, its purpose, and its conversation, user and channel when it has them. */
export const entriesFor = (who: SpendAttributionData): ReadonlyArray<SpendEntry> => [
  { scope: "agent", key: "" },
  { scope: "purpose", key: who.purpose },
  ...(who.conversationId === undefined ? [] : [{ scope: "conversation" as const, key: who.conversationId }]),
  ...(who.user === undefined ? [] : [{ scope: "user" as const, key: who.user }]),
  ...(who.channel === undefined ? [] : [{ scope: "channel" as const, key: who.channel }])
]

/** What a row has spent of a measure: US cents, or tokens (prompt and output together). */
export const spentOf = (row: Pick<SpendRow, "inputTokens" | "outputTokens" | "costMicroUsd"> | undefined, measure: Measure): number =>
  row === undefined ? 0 : measure === "usdCents" ? centsOfMicroUsd(row.costMicroUsd) : row.inputTokens + row.outputTokens

const measures: ReadonlyArray<Measure> = ["usdCents", "tokens"]

/** The caps among `caps` that their rows have reached (spent ≥ limit; a cap of 0 is reached from the start). */
export const reachedCaps = (caps: ReadonlyArray<CapAt>, rows: ReadonlyArray<SpendRow>, day: string): ReadonlyArray<ReachedCap> =>
  caps.flatMap((at) => {
    const row = rows.find((candidate) => candidate.scope === at.entry.scope && candidate.key === at.entry.key)
    return measures.flatMap((measure) => {
      const limit = at.values[measure]
      if (limit === undefined) return []
      const spent = spentOf(row, measure)
      return spent >= limit ? [{ cap: at.cap, measure, limit, spent, key: at.entry.key, day }] : []
    })
  })
