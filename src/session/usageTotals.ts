import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { dialectOf, type Dialect, jsonNumber, jsonText } from "../storage/sqlDialect.js"
import { Usage } from "./messages.js"

/** Usage summed over an agent's finished turns. */
export const UsageTotals = Schema.Struct({ turns: Schema.Number, ...Usage.fields })
export type UsageTotals = typeof UsageTotals.Type

/**
 * The usage of finished agent turns (not agentic runs) as kern.db's event log records them: one sum per field, from
 * `detail`. Shared by the totals below and by retention, which carries the usage of the events it prunes.
 */
export const finishedTurnUsageColumns = (dialect: Dialect): string => {
  const usage = (field: string) => `coalesce(sum(${jsonNumber(dialect, "detail", ["usage", field])}), 0)`
  return `count(*) AS turns,
  ${usage("inputTokens")} AS input_tokens,
  ${usage("outputTokens")} AS output_tokens,
  ${usage("cachedInputTokens")} AS cached_input_tokens,
  ${usage("cacheWriteTokens")} AS cache_write_tokens,
  ${usage("costUsdCents")} AS cost_usd_cents`
}

export const isFinishedTurn = (dialect: Dialect): string =>
  `decision_key = 'kernel.run.finished' AND ${jsonText(dialect, "detail", ["kind"])} = 'turn'`

/**
 * Usage summed over every finished agent turn (not agentic runs): those recorded in kern.db's event log, plus those
 * whose events retention pruned (`usage_carried`).
 */
export const usageTotals = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const dialect = dialectOf(sql)
  const query = SqlSchema.single({
    Request: Schema.Void,
    Result: UsageTotals,
    execute: () =>
      sql.unsafe(`SELECT
          l.turns + coalesce(c.turns, 0) AS turns,
          l.input_tokens + coalesce(c.input_tokens, 0) AS input_tokens,
          l.output_tokens + coalesce(c.output_tokens, 0) AS output_tokens,
          l.cached_input_tokens + coalesce(c.cached_input_tokens, 0) AS cached_input_tokens,
          l.cache_write_tokens + coalesce(c.cache_write_tokens, 0) AS cache_write_tokens,
          l.cost_usd_cents + coalesce(c.cost_usd_cents, 0) AS cost_usd_cents
        FROM (SELECT ${finishedTurnUsageColumns(dialect)} FROM kernel_events WHERE ${isFinishedTurn(dialect)}) l
        LEFT JOIN usage_carried c ON c.id = 1`)
  })
  return yield* query(undefined)
}).pipe(Effect.withSpan("kern.kernel.usageTotals"))
