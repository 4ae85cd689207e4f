import { type SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { RetentionLimits } from "../../config/retention.js"
import { yieldToEventLoop } from "../../config/eventLoop.js"
import { finishedTurnUsageColumns, isFinishedTurn } from "../../session/usageTotals.js"
import { dialectOf } from "../../storage/sqlDialect.js"
import { transaction } from "../../storage/transaction.js"
import type { Freed } from "./RetentionReport.js"

/** Rows per transaction: each holds kern.db's write lock for a few milliseconds, so a turn's writes go between them. */
export const eventBatch = 2_000

export const dayMs = 86_400_000

/** Event ids summed per statement when the log's size is measured. */
const sumRange = 20_000

/**
 * A row's bytes, estimated: its text columns (UTF-8) with the two indexes' copies of run_id and tool_id, and 48 bytes
 * for its numbers, ids and record headers. Within a few percent of the table's and its indexes' pages (dbstat).
 */
const rowBytes = `(48 + octet_length(decision_key) + 2 * octet_length(run_id) + octet_length(trace_id) +
  octet_length(session_id) + 2 * coalesce(octet_length(tool_id), 0) + coalesce(octet_length(args_digest), 0) +
  octet_length(status) + coalesce(octet_length(error_code), 0) + coalesce(octet_length(error_message), 0) +
  coalesce(octet_length(contract_fingerprint), 0) + coalesce(octet_length(registered_fingerprint), 0) +
  coalesce(octet_length(contract_status), 0) + coalesce(octet_length(contract_enforcement), 0) +
  coalesce(octet_length(detail), 0))`

const Totals = Schema.Struct({ count: Schema.Number, bytes: Schema.Number })
const EventRow = Schema.Struct({ eventId: Schema.Number, tsMs: Schema.Number, bytes: Schema.Number })

/**
 * Prunes kern.db's event log (`kernel_events`; only the table, whatever feeds it): the oldest events first, while they
 * are older than `maxAgeDays` or the log is over `maxBytes`. Events are read in id order, which is the order they were
 * recorded in. The usage of the finished turns among them is added to `usage_carried` in the same transaction, so the
 * agent's all-time usage stays whole. A dry run reads the same and changes nothing.
 */
export const pruneEvents = (sql: SqlClient.SqlClient, limits: RetentionLimits, nowMs: number, dryRun: boolean) =>
  Effect.gen(function*() {
    const totals = SqlSchema.single({
      Request: Schema.Struct({ from: Schema.Number, to: Schema.Number }),
      Result: Totals,
      execute: ({ from, to }) =>
        sql`SELECT count(*) AS count, coalesce(sum(${sql.literal(rowBytes)}), 0) AS bytes FROM kernel_events
          WHERE event_id BETWEEN ${from} AND ${to}`
    })
    const batch = SqlSchema.findAll({
      Request: Schema.Number,
      Result: EventRow,
      execute: (after) =>
        sql`SELECT event_id, ts_ms, ${sql.literal(rowBytes)} AS bytes FROM kernel_events WHERE event_id > ${after}
          ORDER BY event_id LIMIT ${eventBatch}`
    })
    // Summed a range of ids at a time, with the event loop let go between ranges: one scan of a million rows held
    // the agent's process for seconds (retention.gc.events.1m).
    const bounds = yield* SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ low: Schema.NullOr(Schema.Number), high: Schema.NullOr(Schema.Number) }),
      execute: () => sql`SELECT min(event_id) AS low, max(event_id) AS high FROM kernel_events`
    })(undefined)
    let before = { count: 0, bytes: 0 }
    for (let from = bounds.low ?? 1; bounds.high !== null && from <= bounds.high; from += sumRange) {
      const part = yield* totals({ from, to: from + sumRange - 1 })
      before = { count: before.count + part.count, bytes: before.bytes + part.bytes }
      yield* yieldToEventLoop
    }
    const cutoffMs = limits.maxAgeDays === null ? -Infinity : nowMs - limits.maxAgeDays * dayMs
    let excess = limits.maxBytes === null ? 0 : before.bytes - limits.maxBytes
    let pruned: Freed = { count: 0, bytes: 0 }
    let after = 0
    while (true) {
      const rows = yield* batch(after)
      let taken = 0
      let bytes = 0
      for (const row of rows) {
        if (row.tsMs >= cutoffMs && excess - bytes <= 0) break
        taken++
        bytes += row.bytes
      }
      if (taken === 0) break
      const first = rows[0]!.eventId
      const last = rows[taken - 1]!.eventId
      if (!dryRun) {
        yield* transaction(sql)(Effect.gen(function*() {
          const dialect = dialectOf(sql)
          yield* sql`INSERT INTO usage_carried (id, turns, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_usd_cents)
             SELECT 1, turns, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_usd_cents FROM (
               SELECT ${sql.literal(finishedTurnUsageColumns(dialect))} FROM kernel_events
               WHERE event_id BETWEEN ${first} AND ${last} AND ${sql.literal(isFinishedTurn(dialect))}
             ) AS pruned WHERE turns > 0
             ON CONFLICT (id) DO UPDATE SET turns = usage_carried.turns + excluded.turns, input_tokens = usage_carried.input_tokens + excluded.input_tokens,
               output_tokens = usage_carried.output_tokens + excluded.output_tokens,
               cached_input_tokens = usage_carried.cached_input_tokens + excluded.cached_input_tokens,
               cache_write_tokens = usage_carried.cache_write_tokens + excluded.cache_write_tokens,
               cost_usd_cents = usage_carried.cost_usd_cents + excluded.cost_usd_cents`
          yield* sql`DELETE FROM kernel_events WHERE event_id BETWEEN ${first} AND ${last}`
        }))
      }
      pruned = { count: pruned.count + taken, bytes: pruned.bytes + bytes }
      excess -= bytes
      after = last
      if (taken < rows.length) break
      yield* yieldToEventLoop
    }
    return { pruned, kept: { count: before.count - pruned.count, bytes: before.bytes - pruned.bytes } }
  }).pipe(Effect.withSpan("kern.retention.events", { attributes: { dryRun } }))
