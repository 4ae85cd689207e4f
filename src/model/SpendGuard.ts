import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Effect, Layer, type ParseResult, PubSub } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import type { Limits } from "../config/limits.js"
import { type BudgetExceeded, budgetExceeded, type ReachedCap } from "./BudgetExceeded.js"
import type { CallTokens } from "./finishUsage.js"
import { priceTable, usageCostCents } from "./pricing.js"
import type { SpendAttributionData } from "./SpendAttribution.js"
import { capsFor, entriesFor, makeSpendDay, reachedCaps, spendZone } from "./spendCaps.js"
import { makeSpendLedger, microUsdOfCents } from "./SpendLedger.js"
import { type SpendStatus, spendStatusOf, type SpendTotals, totalsOf } from "./spendStatus.js"
import { keptSpan } from "../kernel/keptSpan.js"

export interface SpendGuardShape {
  /** Refuses a call of `who` when a cap it counts against is reached today: one indexed read, none without caps. */
  readonly check: (who: SpendAttributionData) => Effect.Effect<void, BudgetExceeded>
  /** A finished call's actual tokens and cost, into the ledger; a cap it reached is told to the operator. */
  readonly record: (who: SpendAttributionData, modelId: string, tokens: CallTokens) => Effect.Effect<void>
  /** Each cap reached, once per cap, whose and day (kern.db's `notices`): what the operator's surfaces show. */
  readonly reached: PubSub.PubSub<BudgetExceeded>
  /** Today's spend against the caps. */
  readonly today: Effect.Effect<SpendStatus, SqlError | ParseResult.ParseError>
  /** Today's rows of one person and channel, with the caps (`/usage` in a chat: what applies to them alone). */
  readonly todayOf: (who: { readonly user: string; readonly channel: string }) => Effect.Effect<SpendOf, SqlError | ParseResult.ParseError>
}

/** One person's and channel's spend today: their ledger rows (none when nothing was spent) and the caps. */
export interface SpendOf {
  readonly day: string
  readonly limits: Limits
  readonly user: SpendTotals
  readonly channel: SpendTotals
}

/**
 * The spend ceiling (`limits`): every model call of the agent (turns, the heartbeat, summaries, embeddings) is checked
 * here before it is made and recorded after, whatever provider answers: the LanguageModel and the embedder are built
 * over it (Provider.ts, recall/Embedder.ts), so no call goes around it.
 */
export class SpendGuard extends Context.Tag("kern/model/SpendGuard")<SpendGuard, SpendGuardShape>() {}

export const make = Effect.gen(function*() {
  const { config } = yield* AgentConfig
  const sql = yield* SqlClient.SqlClient
  const ledger = yield* makeSpendLedger
  const limits = config.limits
  const dayOf = makeSpendDay(spendZone(config.timezone))
  const prices = priceTable(config.prices)
  const reached = yield* PubSub.unbounded<BudgetExceeded>()
  const today = Effect.map(Clock.currentTimeMillis, dayOf)

  /** The operator is told of a reached cap once per cap, whose and day: the first to insert its notice tells. */
  const tellOnce = (cap: ReachedCap) =>
    Effect.gen(function*() {
      const exceeded = budgetExceeded(cap)
      const nowMs = yield* Clock.currentTimeMillis
      const key = `limits.${cap.cap}.${cap.measure}:${cap.key}:${cap.day}`
      const inserted = yield* sql`INSERT INTO notices (key, given_at_ms) VALUES (${key}, ${nowMs}) ON CONFLICT (key) DO NOTHING RETURNING key`
      if (inserted.length === 0) return
      yield* Effect.logWarning(`kern: ${exceeded.message}`)
      yield* PubSub.publish(reached, exceeded)
    }).pipe(
      Effect.catchTag("SqlError", (error) => Effect.logWarning(`kern: could not record that a spend cap was reached: ${error.message}`))
    )

  const check = (who: SpendAttributionData): Effect.Effect<void, BudgetExceeded> => {
    const caps = capsFor(limits, who)
    if (caps.length === 0) return Effect.void
    return Effect.gen(function*() {
      const day = yield* today
      const rows = yield* ledger.rowsOf(day, caps.map((at) => at.entry))
      const [first, ...rest] = reachedCaps(caps, rows, day)
      if (first === undefined) return
      yield* Effect.forEach([first, ...rest], tellOnce, { discard: true })
      return yield* budgetExceeded(first)
    }).pipe(
      // kern.db unreadable: the call goes ahead, said in the log. The ledger is the agent's own database, which every
      // turn writes anyway; refusing every call for a busy read would stop the agent over bookkeeping.
      Effect.catchTags({
        SqlError: (error) => Effect.logWarning(`kern: the spend ledger could not be read (${error.message}); the call goes ahead`),
        ParseError: (error) => Effect.logWarning(`kern: the spend ledger could not be read (${error.message}); the call goes ahead`)
      }),
      keptSpan("kern.model.spend.check", { attributes: { purpose: who.purpose } })
    )
  }

  const record = (who: SpendAttributionData, modelId: string, tokens: CallTokens): Effect.Effect<void> =>
    Effect.gen(function*() {
      const day = yield* today
      const costMicroUsd = microUsdOfCents(usageCostCents(modelId, tokens, prices))
      const rows = yield* ledger.add(day, entriesFor(who), { inputTokens: tokens.inputTokens, outputTokens: tokens.outputTokens, costMicroUsd })
      yield* Effect.forEach(reachedCaps(capsFor(limits, who), rows, day), tellOnce, { discard: true })
    }).pipe(
      Effect.catchAll((error) => Effect.logWarning(`kern: a model call's spend could not be recorded: ${error.message}`)),
      keptSpan("kern.model.spend.record", { attributes: { purpose: who.purpose, model: modelId } })
    )

  return SpendGuard.of({
    check,
    record,
    reached,
    today: Effect.flatMap(today, (day) => Effect.map(ledger.day(day), (rows) => spendStatusOf(day, limits, rows))),
    todayOf: (who) =>
      Effect.flatMap(today, (day) =>
        Effect.map(
          ledger.rowsOf(day, [{ scope: "user", key: who.user }, { scope: "channel", key: who.channel }]),
          (rows): SpendOf => ({
            day,
            limits,
            user: totalsOf(rows.find((row) => row.scope === "user" && row.key === who.user)),
            channel: totalsOf(rows.find((row) => row.scope === "channel" && row.key === who.channel))
          })
        )).pipe(Effect.withSpan("kern.model.spend.todayOf"))
  })
})

/** The guard over the agent's config and kern.db. */
export const layer: Layer.Layer<SpendGuard, never, AgentConfig | SqlClient.SqlClient> = Layer.effect(SpendGuard, make)

/**
 * No ceiling and no ledger: every call goes ahead and nothing is recorded. For tests of the providers themselves and
 * programs that build a model with no kern.db; an agent's runtime always builds `layer`.
 */
export const layerNone: Layer.Layer<SpendGuard> = Layer.effect(
  SpendGuard,
  Effect.map(PubSub.unbounded<BudgetExceeded>(), (reached) =>
    SpendGuard.of({
      check: () => Effect.void,
      record: () => Effect.void,
      reached,
      today: Effect.succeed(spendStatusOf("", {}, [])),
      todayOf: () => Effect.succeed({ day: "", limits: {}, user: totalsOf(undefined), channel: totalsOf(undefined) })
    }))
)
