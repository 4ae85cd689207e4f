import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { keptSpan } from "../kernel/keptSpan.js"

/** What the ledger sums apart (migration 1040_spend_ledger). */
export type SpendScope = "agent" | "user" | "channel" | "conversation" | "purpose"

/** One scope's sums for a day; cost in micro-USD (millionths of a dollar). */
export const SpendRow = Schema.Struct({
  scope: Schema.String,
  key: Schema.String,
  calls: Schema.Number,
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  costMicroUsd: Schema.Number
})
export type SpendRow = typeof SpendRow.Type

export interface SpendEntry {
  readonly scope: SpendScope
  readonly key: string
}

/** One call's tokens and cost, as the ledger adds them. */
export interface SpendAmount {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly costMicroUsd: number
}

/** US cents → micro-USD, the ledger's integer unit. */
export const microUsdOfCents = (cents: number): number => Math.round(cents * 10_000)
export const centsOfMicroUsd = (micro: number): number => micro / 10_000

/**
 * The ledger's rows in kern.db. The day is the caller's (`YYYY-MM-DD` in the agent's timezone); every query reads or
 * writes by the primary key (day, scope, key).
 */
export const makeSpendLedger = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // The requests are typed and already in their encoded form, so only the rows read back are decoded (a Request
  // schema would encode each call's arguments through Schema for nothing, every model step).
  const decodeRows = Schema.decodeUnknown(Schema.Array(SpendRow))

  /** Adds one call to each entry's row of the day: one statement; the rows' new sums. */
  const add = (day: string, entries: ReadonlyArray<SpendEntry>, amount: SpendAmount) =>
    Effect.flatMap(
      sql`INSERT INTO spend_ledger ${
        sql.insert(entries.map((entry) => ({
          day,
          scope: entry.scope,
          key: entry.key,
          calls: 1,
          inputTokens: amount.inputTokens,
          outputTokens: amount.outputTokens,
          costMicroUsd: amount.costMicroUsd
        })))
      }
        ON CONFLICT (day, scope, key) DO UPDATE SET
          calls = spend_ledger.calls + 1,
          input_tokens = spend_ledger.input_tokens + excluded.input_tokens,
          output_tokens = spend_ledger.output_tokens + excluded.output_tokens,
          cost_micro_usd = spend_ledger.cost_micro_usd + excluded.cost_micro_usd
        RETURNING scope, key, calls, input_tokens, output_tokens, cost_micro_usd`,
      decodeRows
    )

  /** The rows of the day for exactly these entries (the caps a call counts against). */
  const rowsOf = (day: string, entries: ReadonlyArray<SpendEntry>) =>
    Effect.flatMap(
      sql`SELECT scope, key, calls, input_tokens, output_tokens, cost_micro_usd FROM spend_ledger
        WHERE day = ${day} AND (${sql.or(entries.map((entry) => sql`(scope = ${entry.scope} AND key = ${entry.key})`))})`,
      decodeRows
    )

  /** Every row of the day (`kern status`, `/usage`). */
  const dayRows = SqlSchema.findAll({
    Request: Schema.String,
    Result: SpendRow,
    execute: (day) =>
      sql`SELECT scope, key, calls, input_tokens, output_tokens, cost_micro_usd FROM spend_ledger WHERE day = ${day}
        ORDER BY scope, cost_micro_usd DESC, input_tokens + output_tokens DESC`
  })

  return {
    add: (day: string, entries: ReadonlyArray<SpendEntry>, amount: SpendAmount) =>
      add(day, entries, amount).pipe(keptSpan("kern.model.spend.add")),
    rowsOf: (day: string, entries: ReadonlyArray<SpendEntry>) =>
      entries.length === 0 ? Effect.succeed([]) : rowsOf(day, entries).pipe(Effect.withSpan("kern.model.spend.rows")),
    day: (day: string) => dayRows(day).pipe(Effect.withSpan("kern.model.spend.day"))
  } as const
})

export type SpendLedger = Effect.Effect.Success<typeof makeSpendLedger>
