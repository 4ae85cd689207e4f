import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface UsageTotals {
  readonly turns: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cachedInputTokens: number
  readonly costUsdCents: number
}

/** Usage summed over every finished agent turn (not agentic runs) recorded in kern.db's event log. */
export const usageTotals = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<UsageTotals>`SELECT
      count(*) AS turns,
      coalesce(sum(json_extract(detail, '$.usage.inputTokens')), 0) AS input_tokens,
      coalesce(sum(json_extract(detail, '$.usage.outputTokens')), 0) AS output_tokens,
      coalesce(sum(json_extract(detail, '$.usage.cachedInputTokens')), 0) AS cached_input_tokens,
      coalesce(sum(json_extract(detail, '$.usage.costUsdCents')), 0) AS cost_usd_cents
    FROM kernel_events WHERE decision_key = 'kernel.run.finished' AND json_extract(detail, '$.kind') = 'turn'`
  return row ?? { turns: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsdCents: 0 }
}).pipe(Effect.withSpan("kern.agent.usageTotals"))
