import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Usage } from "./messages.js"

/** Usage summed over an agent's finished turns. */
export const UsageTotals = Schema.Struct({ turns: Schema.Number, ...Usage.fields })
export type UsageTotals = typeof UsageTotals.Type

/** Usage summed over every finished agent turn (not agentic runs) recorded in kern.db's event log. */
export const usageTotals = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const query = SqlSchema.single({
    Request: Schema.Void,
    Result: UsageTotals,
    execute: () =>
      sql`SELECT
          count(*) AS turns,
          coalesce(sum(json_extract(detail, '$.usage.inputTokens')), 0) AS input_tokens,
          coalesce(sum(json_extract(detail, '$.usage.outputTokens')), 0) AS output_tokens,
          coalesce(sum(json_extract(detail, '$.usage.cachedInputTokens')), 0) AS cached_input_tokens,
          coalesce(sum(json_extract(detail, '$.usage.cacheWriteTokens')), 0) AS cache_write_tokens,
          coalesce(sum(json_extract(detail, '$.usage.costUsdCents')), 0) AS cost_usd_cents
        FROM kernel_events WHERE decision_key = 'kernel.run.finished' AND json_extract(detail, '$.kind') = 'turn'`
  })
  return yield* query(undefined)
}).pipe(Effect.withSpan("kern.kernel.usageTotals"))
