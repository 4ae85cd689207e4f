import { Effect, Schema } from "effect"

/** The caps of a run (seed 002 defaults; an agent turn takes larger ones from config). */
export class BudgetLimits extends Schema.Class<BudgetLimits>("BudgetLimits")({
  maxToolCalls: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 20 }),
  maxRetriesPerTool: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 3 }),
  maxPromptTokens: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 4000 }),
  maxLatencyMs: Schema.optionalWith(Schema.Number.pipe(Schema.nonNegative()), { default: () => 30_000 }),
  maxCostUsdCents: Schema.optionalWith(Schema.Number.pipe(Schema.nonNegative()), { default: () => 10 })
}) {}

export type BudgetLimitsInput = {
  readonly [K in "maxToolCalls" | "maxRetriesPerTool" | "maxPromptTokens" | "maxLatencyMs" | "maxCostUsdCents"]: number
}

export type Reservation = { readonly granted: true } | { readonly granted: false; readonly cap: string }

export interface BudgetUsage {
  readonly toolCallsUsed: number
  readonly promptTokensUsed: number
  readonly latencyMsUsed: number
  readonly costUsdCentsUsed: number
}

const zero: BudgetUsage = { toolCallsUsed: 0, promptTokensUsed: 0, latencyMsUsed: 0, costUsdCentsUsed: 0 }

const granted: Reservation = { granted: true }

/** The caps a run can hand part of to a sub-agent (RunBudget.carve). */
export type CarvedBudget = {
  readonly maxToolCalls: number
  readonly maxPromptTokens: number
  readonly maxCostUsdCents: number
}

/** What a sub-agent asks of each carvable cap; a cap not named gets half of what is left. */
export type CarveRequest = { readonly [K in keyof CarvedBudget]?: number | undefined }

/** What is left of each carvable cap. */
const leftOf = (limits: BudgetLimits, usage: BudgetUsage): CarvedBudget => ({
  maxToolCalls: Math.max(0, limits.maxToolCalls - usage.toolCallsUsed),
  maxPromptTokens: Math.max(0, limits.maxPromptTokens - usage.promptTokensUsed),
  maxCostUsdCents: Math.max(0, limits.maxCostUsdCents - usage.costUsdCentsUsed)
})

/**
 * The part of what is left that `wanted` asks for: each cap it names, up to what is left; half of what is left of
 * each cap it does not name.
 */
export const carvedOf = (left: CarvedBudget, wanted: CarveRequest): CarvedBudget => ({
  maxToolCalls: Math.min(left.maxToolCalls, wanted.maxToolCalls ?? Math.floor(left.maxToolCalls / 2)),
  maxPromptTokens: Math.min(left.maxPromptTokens, wanted.maxPromptTokens ?? Math.floor(left.maxPromptTokens / 2)),
  maxCostUsdCents: Math.min(left.maxCostUsdCents, wanted.maxCostUsdCents ?? left.maxCostUsdCents / 2)
})

/** The caps a run can reach. */
export const BudgetCap = Schema.Literal("maxToolCalls", "maxPromptTokens", "maxLatencyMs", "maxCostUsdCents")
export type BudgetCap = typeof BudgetCap.Type

/** Which cap a usage has reached, if any. */
export const exceededCap = (limits: BudgetLimits, usage: BudgetUsage): BudgetCap | undefined =>
  usage.toolCallsUsed >= limits.maxToolCalls
    ? "maxToolCalls"
    : usage.promptTokensUsed >= limits.maxPromptTokens
    ? "maxPromptTokens"
    : usage.latencyMsUsed >= limits.maxLatencyMs
    ? "maxLatencyMs"
    : usage.costUsdCentsUsed >= limits.maxCostUsdCents
    ? "maxCostUsdCents"
    : undefined

/**
 * A run's limits and what it has used. The accumulators live in one Ref so that parallel tool calls reserve and
 * account atomically: 100 concurrent reservations against 20 calls grant exactly 20.
 */
export interface RunBudget {
  readonly limits: BudgetLimits
  readonly usage: Effect.Effect<BudgetUsage>
  /** Takes one tool call if one is left and no other cap is reached; the reason otherwise. */
  readonly reserveToolCall: Effect.Effect<Reservation>
  readonly remainingToolCalls: Effect.Effect<number>
  readonly budgetExceeded: Effect.Effect<boolean>
  readonly addPromptTokens: (tokens: number) => Effect.Effect<void>
  readonly addLatencyMs: (ms: number) => Effect.Effect<void>
  readonly addCostUsdCents: (cents: number) => Effect.Effect<void>
  /**
   * reserveToolCall and addLatencyMs done at once, for a caller already running (the executor, on every call): the
   * same atomic update of the same usage, with no Effect step.
   */
  readonly reserveToolCallNow: () => Reservation
  readonly addLatencyMsNow: (ms: number) => void
  /**
   * Hands part of what is left to a sub-agent (carvedOf), atomically: the part counts as used here, so what a run
   * gives away it cannot spend again, nor give twice.
   */
  readonly carve: (wanted: CarveRequest) => Effect.Effect<CarvedBudget>
  readonly toJSON: Effect.Effect<BudgetLimitsInput & BudgetUsage>
}

export const makeRunBudget = (limits: Partial<BudgetLimitsInput> = {}): Effect.Effect<RunBudget> =>
  Effect.sync(() => {
    const caps = BudgetLimits.make(limits)
    // The run's usage, replaced whole by each update. Every update is synchronous, so parallel calls (fibers of one
    // thread) each see the one before: a reservation is atomic without a Ref's Effect step around it.
    let used = zero
    const modify = <A>(f: (usage: BudgetUsage) => readonly [A, BudgetUsage]): A => {
      const [answer, next] = f(used)
      used = next
      return answer
    }
    const usage = Effect.sync(() => used)
    // Each usage built whole, with its four fields in one order: a spread or a computed key would make objects of
    // other shapes (a tool call's accounting took microseconds through them).
    const addNow = (key: keyof BudgetUsage) => (amount: number): void => {
      used = {
        toolCallsUsed: used.toolCallsUsed + (key === "toolCallsUsed" ? amount : 0),
        promptTokensUsed: used.promptTokensUsed + (key === "promptTokensUsed" ? amount : 0),
        latencyMsUsed: used.latencyMsUsed + (key === "latencyMsUsed" ? amount : 0),
        costUsdCentsUsed: used.costUsdCentsUsed + (key === "costUsdCentsUsed" ? amount : 0)
      }
    }
    const add = (key: keyof BudgetUsage) => {
      const now = addNow(key)
      return (amount: number) => Effect.sync(() => now(amount))
    }
    const reserveToolCallNow = () =>
      modify((usage): readonly [Reservation, BudgetUsage] => {
        const cap = exceededCap(caps, usage)
        return cap === undefined
          ? [granted, {
            toolCallsUsed: usage.toolCallsUsed + 1,
            promptTokensUsed: usage.promptTokensUsed,
            latencyMsUsed: usage.latencyMsUsed,
            costUsdCentsUsed: usage.costUsdCentsUsed
          }]
          : [{ granted: false, cap }, usage]
      })
    const addLatencyMsNow = addNow("latencyMsUsed")
    return {
      limits: caps,
      usage,
      reserveToolCall: Effect.sync(reserveToolCallNow),
      reserveToolCallNow,
      addLatencyMsNow,
      remainingToolCalls: Effect.map(usage, (usage) => Math.max(0, caps.maxToolCalls - usage.toolCallsUsed)),
      budgetExceeded: Effect.map(usage, (usage) => exceededCap(caps, usage) !== undefined),
      addPromptTokens: add("promptTokensUsed"),
      addLatencyMs: add("latencyMsUsed"),
      addCostUsdCents: add("costUsdCentsUsed"),
      carve: (wanted) =>
        Effect.sync(() => modify((usage): readonly [CarvedBudget, BudgetUsage] => {
          const part = carvedOf(leftOf(caps, usage), wanted)
          return [part, {
            ...usage,
            toolCallsUsed: usage.toolCallsUsed + part.maxToolCalls,
            promptTokensUsed: usage.promptTokensUsed + part.maxPromptTokens,
            costUsdCentsUsed: usage.costUsdCentsUsed + part.maxCostUsdCents
          }]
        })),
      toJSON: Effect.map(usage, (usage) => ({
        maxToolCalls: caps.maxToolCalls,
        maxRetriesPerTool: caps.maxRetriesPerTool,
        maxPromptTokens: caps.maxPromptTokens,
        maxLatencyMs: caps.maxLatencyMs,
        maxCostUsdCents: caps.maxCostUsdCents,
        ...usage
      }))
    }
  })
