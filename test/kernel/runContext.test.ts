import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { elapsedMs, isSafeMode, makeRunContext } from "../../src/kernel/RunContext.js"
import { makeRunBudget } from "../../src/kernel/RunBudget.js"

describe("RunContext", () => {
  it.effect("has the seed's id shapes and defaults", () =>
    Effect.gen(function*() {
      const ctx = yield* makeRunContext()
      assert.match(ctx.runId, /^run_[0-9a-f]{16}$/)
      assert.match(ctx.traceId, /^[0-9a-f]{32}$/)
      assert.strictEqual(ctx.agentName, "default")
      assert.strictEqual(ctx.locale, "en-US")
      assert.strictEqual(ctx.safetyMode, "NORMAL")
      assert.isFalse(isSafeMode(ctx))
      assert.isTrue(isSafeMode(yield* makeRunContext({ safetyMode: "SAFE" })))
      assert.isTrue(isSafeMode(yield* makeRunContext({ safetyMode: "STRICT" })))
      const other = yield* makeRunContext()
      assert.notStrictEqual(other.runId, ctx.runId)
    }))

  it.effect("elapsedMs follows the Clock", () =>
    Effect.gen(function*() {
      const ctx = yield* makeRunContext()
      yield* TestClock.adjust("1500 millis")
      assert.strictEqual(yield* elapsedMs(ctx), 1500)
    }))
})

describe("RunBudget", () => {
  it.effect("has the seed's defaults and a JSON form", () =>
    Effect.gen(function*() {
      const budget = yield* makeRunBudget()
      assert.deepStrictEqual(yield* budget.toJSON, {
        maxToolCalls: 20,
        maxRetriesPerTool: 3,
        maxPromptTokens: 4000,
        maxLatencyMs: 30_000,
        maxCostUsdCents: 10,
        toolCallsUsed: 0,
        promptTokensUsed: 0,
        latencyMsUsed: 0,
        costUsdCentsUsed: 0
      })
      assert.strictEqual(yield* budget.remainingToolCalls, 20)
    }))

  it.effect("any cap reached means exceeded, and no more calls are reserved", () =>
    Effect.gen(function*() {
      const budget = yield* makeRunBudget({ maxToolCalls: 2, maxCostUsdCents: 1 })
      assert.isTrue((yield* budget.reserveToolCall).granted)
      assert.strictEqual(yield* budget.remainingToolCalls, 1)
      assert.isFalse(yield* budget.budgetExceeded)
      yield* budget.addCostUsdCents(1.5)
      assert.isTrue(yield* budget.budgetExceeded)
      const refused = yield* budget.reserveToolCall
      assert.deepStrictEqual(refused, { granted: false, cap: "maxCostUsdCents" })
      const tokens = yield* makeRunBudget({ maxPromptTokens: 100 })
      yield* tokens.addPromptTokens(100)
      assert.isTrue(yield* tokens.budgetExceeded)
    }))
})
