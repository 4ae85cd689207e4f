import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeRunBudget } from "../../src/kernel/RunBudget.js"

// A sub-agent's budget is carved out of its parent run's: what is given counts as used by the parent, atomically.

describe("RunBudget.carve", () => {
  it.effect("gives what is asked up to what is left, half of what is left of a cap not named, and counts it as used", () =>
    Effect.gen(function*() {
      const budget = yield* makeRunBudget({ maxToolCalls: 10, maxPromptTokens: 1000, maxCostUsdCents: 8 })
      yield* budget.reserveToolCall
      expect(yield* budget.carve({ maxToolCalls: 50 })).toEqual({ maxToolCalls: 9, maxPromptTokens: 500, maxCostUsdCents: 4 })
      expect(yield* budget.usage).toMatchObject({ toolCallsUsed: 10, promptTokensUsed: 500, costUsdCentsUsed: 4 })
      // Nothing left to give twice: the parent's next call is refused.
      expect(yield* budget.carve({})).toEqual({ maxToolCalls: 0, maxPromptTokens: 250, maxCostUsdCents: 2 })
      expect(yield* budget.reserveToolCall).toEqual({ granted: false, cap: "maxToolCalls" })
    }))

  it.effect("parallel carves never give away more than is left", () =>
    Effect.gen(function*() {
      const budget = yield* makeRunBudget({ maxToolCalls: 20, maxPromptTokens: 1000, maxCostUsdCents: 10 })
      const parts = yield* Effect.all(Array.from({ length: 10 }, () => budget.carve({ maxToolCalls: 3 })), { concurrency: "unbounded" })
      expect(parts.reduce((sum, part) => sum + part.maxToolCalls, 0)).toBe(20)
    }))
})
