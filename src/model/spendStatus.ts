import { Schema } from "effect"
import { Limits } from "../config/limits.js"
import { SpendCapName, SpendMeasure } from "./BudgetExceeded.js"
import { capsFor, reachedCaps } from "./spendCaps.js"
import { centsOfMicroUsd, type SpendRow } from "./SpendLedger.js"

export const SpendTotals = Schema.Struct({
  calls: Schema.Number,
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  usdCents: Schema.Number
})
export type SpendTotals = typeof SpendTotals.Type

export const KeyedSpend = Schema.Struct({ key: Schema.String, ...SpendTotals.fields })

/** Today's spend against the caps: what `kern status`, GET /status, the web UI and `/usage` show. */
export const SpendStatus = Schema.Struct({
  /** `YYYY-MM-DD` in the agent's timezone. */
  day: Schema.String,
  limits: Limits,
  agent: SpendTotals,
  /** The users, channels and purposes (turn, heartbeat, summary, embedding, other) that spent today, most first. */
  users: Schema.Array(KeyedSpend),
  channels: Schema.Array(KeyedSpend),
  purposes: Schema.Array(KeyedSpend),
  /** The caps reached today: their calls are refused until the day ends or the cap is raised. */
  reached: Schema.Array(Schema.Struct({
    cap: SpendCapName,
    measure: SpendMeasure,
    key: Schema.String,
    limit: Schema.Number,
    spent: Schema.Number
  }))
})
export type SpendStatus = typeof SpendStatus.Type

/** Users and channels listed at most. */
const listed = 20

/** A ledger row's totals in cents; zero for no row. */
export const totalsOf = (row: SpendRow | undefined): SpendTotals => ({
  calls: row?.calls ?? 0,
  inputTokens: row?.inputTokens ?? 0,
  outputTokens: row?.outputTokens ?? 0,
  usdCents: centsOfMicroUsd(row?.costMicroUsd ?? 0)
})

/** The day's ledger rows as the status shows them, with the caps they reached. */
export const spendStatusOf = (day: string, limits: Limits, rows: ReadonlyArray<SpendRow>): SpendStatus => {
  const keyed = (scope: string) =>
    rows.filter((row) => row.scope === scope).slice(0, listed).map((row) => ({ key: row.key, ...totalsOf(row) }))
  const users = rows.filter((row) => row.scope === "user")
  const channels = rows.filter((row) => row.scope === "channel")
  const caps = [
    ...capsFor({ ...limits, perUser: undefined, perChannel: undefined }, { purpose: "other" }),
    ...users.flatMap((row) => capsFor({ perUser: limits.perUser }, { purpose: "other", user: row.key })),
    ...channels.flatMap((row) => capsFor({ perChannel: limits.perChannel }, { purpose: "other", channel: row.key }))
  ]
  return {
    day,
    limits,
    agent: totalsOf(rows.find((row) => row.scope === "agent")),
    users: keyed("user"),
    channels: keyed("channel"),
    purposes: keyed("purpose"),
    reached: reachedCaps(caps, rows, day).map(({ cap, key, limit, measure, spent }) => ({ cap, measure, key, limit, spent }))
  }
}

const amount = (value: number, measure: "usdCents" | "tokens") =>
  measure === "usdCents" ? `${value.toFixed(2)}¢` : `${value} tokens`

/** One cap against what was spent: `12.30¢ of 500¢, 4200 of 1000000 tokens`; the spend alone without a cap. */
export const againstCap = (spent: SpendTotals, cap: Limits["perDay"]): string => {
  const tokens = spent.inputTokens + spent.outputTokens
  const cents = cap?.usdCents === undefined ? amount(spent.usdCents, "usdCents") : `${spent.usdCents.toFixed(2)}¢ of ${cap.usdCents}¢`
  const count = cap?.tokens === undefined ? amount(tokens, "tokens") : `${tokens} of ${cap.tokens} tokens`
  return `${cents}, ${count}`
}

/** The status as lines (`kern status`, `/usage`): today's spend against each cap, the caps reached. */
export const spendLines = (status: SpendStatus): ReadonlyArray<string> => {
  const { limits } = status
  const capped = (name: string, cap: Limits["perDay"]) =>
    cap === undefined ? "" : ` (${name}: ${[cap.usdCents === undefined ? "" : `${cap.usdCents}¢`, cap.tokens === undefined ? "" : `${cap.tokens} tokens`].filter((x) => x !== "").join(", ")} each)`
  return [
    `today ${status.day}: ${againstCap(status.agent, limits.perDay)}${limits.perDay === undefined ? " (no perDay cap)" : " (perDay)"}, ${status.agent.calls} model calls`,
    ...(status.purposes.length === 0 ? [] : [`  by purpose: ${status.purposes.map((row) => `${row.key} ${row.usdCents.toFixed(2)}¢ / ${row.inputTokens + row.outputTokens} tokens`).join(", ")}`]),
    ...(status.users.length === 0 && limits.perUser === undefined ? [] : [`  users${capped("perUser", limits.perUser)}: ${status.users.length === 0 ? "none yet" : status.users.map((row) => `${row.key} ${againstCap(row, limits.perUser)}`).join("; ")}`]),
    ...(status.channels.length === 0 && limits.perChannel === undefined ? [] : [`  channels${capped("perChannel", limits.perChannel)}: ${status.channels.length === 0 ? "none yet" : status.channels.map((row) => `${row.key} ${againstCap(row, limits.perChannel)}`).join("; ")}`]),
    ...status.reached.map((reached) =>
      `  REACHED: limits.${reached.cap}.${reached.measure} ${amount(reached.limit, reached.measure)}${reached.key === "" ? "" : ` for ${reached.key}`} (${amount(reached.spent, reached.measure)} spent): its calls are refused today`
    )
  ]
}
