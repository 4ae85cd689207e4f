import { type SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { DateTime } from "effect"
import type { RetentionLimits } from "../../config/retention.js"
import { spendDay } from "../../model/spendCaps.js"
import { yieldToEventLoop } from "../../config/eventLoop.js"
import { transaction } from "../../storage/transaction.js"
import { dayMs } from "./pruneEvents.js"
import type { Freed } from "./RetentionReport.js"

/** Bytes of a row, estimated from its text and a fixed part for its numbers and record header. */
const spendRowBytes = `(40 + octet_length(day) + octet_length(scope) + octet_length(key))`
const contextRowBytes = `(48 + octet_length(session_id))`

const DayRow = Schema.Struct({ day: Schema.String, count: Schema.Number, bytes: Schema.Number })
const ContextRow = Schema.Struct({ sessionId: Schema.String, updatedAtMs: Schema.Number, bytes: Schema.Number })

/** Session counter rows deleted per statement. */
const contextBatch = 500

/** The first day of the month `day` (`YYYY-MM-DD`) is in. */
const monthStart = (day: string) => `${day.slice(0, 7)}-01`

/** A day's start, for ordering days among timestamps (its zone's offset does not change the order of days). */
const dayStartMs = (day: string) => Date.parse(`${day}T00:00:00Z`)

/**
 * Prunes the count records in kern.db, oldest first, while older than `maxAgeDays` or over `maxBytes`:
 * - the spend ledger's days (`spend_ledger`), never one of this month in the agent's zone (today's caps, and any cap
 *   by the month, read them);
 * - the per-session context counters (`context_stats`, context_budget_stats) of sessions idle since; a session used
 *   again counts on from zero. The sessions themselves are never touched.
 */
export const pruneCounts = (
  sql: SqlClient.SqlClient,
  limits: RetentionLimits,
  nowMs: number,
  zone: DateTime.TimeZone,
  dryRun: boolean
) =>
  Effect.gen(function*() {
    const keepFromDay = monthStart(spendDay(nowMs, zone))
    const days = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: DayRow,
      execute: () => sql.unsafe(`SELECT day, count(*) AS count, sum(${spendRowBytes}) AS bytes FROM spend_ledger GROUP BY day ORDER BY day`)
    })(undefined)
    const contexts = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: ContextRow,
      execute: () =>
        sql.unsafe(`SELECT session_id, updated_at_ms, ${contextRowBytes} AS bytes FROM context_stats ORDER BY updated_at_ms, session_id`)
    })(undefined)
    const sum = (rows: ReadonlyArray<{ readonly bytes: number }>) => rows.reduce((total, row) => total + row.bytes, 0)
    const total = sum(days) + sum(contexts)
    const count = days.reduce((n, day) => n + day.count, 0) + contexts.length
    const cutoffMs = limits.maxAgeDays === null ? -Infinity : nowMs - limits.maxAgeDays * dayMs
    const cutoffDay = limits.maxAgeDays === null ? "" : spendDay(cutoffMs, zone)
    let excess = limits.maxBytes === null ? 0 : total - limits.maxBytes

    // Oldest first across both tables (a day of the ledger by its start, a session's counters by their last change),
    // until the first that is neither too old nor needed for the size.
    const prunableDays = days.filter((day) => day.day < keepFromDay)
    const spendGone: Array<typeof DayRow.Type> = []
    const contextGone: Array<typeof ContextRow.Type> = []
    let d = 0
    let c = 0
    while (d < prunableDays.length || c < contexts.length) {
      const day = prunableDays[d]
      const context = contexts[c]
      const takeDay = day !== undefined && (context === undefined || dayStartMs(day.day) <= context.updatedAtMs)
      if (takeDay) {
        if (!(day.day < cutoffDay || excess > 0)) break
        spendGone.push(day)
        excess -= day.bytes
        d++
      } else {
        if (!(context!.updatedAtMs < cutoffMs || excess > 0)) break
        contextGone.push(context!)
        excess -= context!.bytes
        c++
      }
    }
    if (!dryRun) {
      for (const day of spendGone) yield* sql`DELETE FROM spend_ledger WHERE day = ${day.day}`
      for (let i = 0; i < contextGone.length; i += contextBatch) {
        const ids = contextGone.slice(i, i + contextBatch)
        // Only counters still as idle as they were read: a session that counted meanwhile keeps its row.
        yield* transaction(sql)(Effect.forEach(ids, (row) =>
          sql`DELETE FROM context_stats WHERE session_id = ${row.sessionId} AND updated_at_ms = ${row.updatedAtMs}`, { discard: true }))
        yield* yieldToEventLoop
      }
    }
    const spendRows: Freed = { count: spendGone.reduce((n, day) => n + day.count, 0), bytes: sum(spendGone) }
    const contextRows: Freed = { count: contextGone.length, bytes: sum(contextGone) }
    return {
      spendRows,
      contextRows,
      kept: { count: count - spendRows.count - contextRows.count, bytes: total - spendRows.bytes - contextRows.bytes }
    }
  }).pipe(Effect.withSpan("kern.retention.counts", { attributes: { dryRun } }))
