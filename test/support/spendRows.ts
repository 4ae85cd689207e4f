import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { spendDay, spendZone } from "../../src/model/spendCaps.js"
import * as Database from "../../src/storage/Database.js"

/** A ledger row as the spend guard writes it: scope, key, prompt and output tokens, cost in US cents. */
export type SpendRowSeed = readonly [scope: string, key: string, inputTokens: number, outputTokens: number, cents: number]

/** Today in `timezone` (the machine's when none), as the ledger keys its rows: tests that seed run on the live clock. */
export const today = (timezone?: string) => spendDay(Date.now(), spendZone(timezone))

/** Writes ledger rows for `day` (one call each) straight into kern.db, behind the agent's back. */
export const seedSpend = (sql: SqlClient.SqlClient, day: string, rows: ReadonlyArray<SpendRowSeed>) =>
  Effect.forEach(rows, ([scope, key, inputTokens, outputTokens, cents]) =>
    sql`INSERT INTO spend_ledger (day, scope, key, calls, input_tokens, output_tokens, cost_micro_usd)
      VALUES (${day}, ${scope}, ${key}, 1, ${inputTokens}, ${outputTokens}, ${Math.round(cents * 10_000)})`, { discard: true }).pipe(Effect.orDie)

/** The same into an agent folder's kern.db (migrated first) while no agent runs. */
export const seedSpendIn = (dir: string, day: string, rows: ReadonlyArray<SpendRowSeed>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => seedSpend(sql, day, rows)).pipe(
    Effect.provide(Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") })),
    Effect.orDie
  )
