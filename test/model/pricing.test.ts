import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { costCents, priceFor, usageCostCents } from "../../src/model/pricing.js"

describe("pricing", () => {
  it("finds prices by bare id, ignoring provider prefixes and date suffixes", () => {
    expect(priceFor("openai/gpt-4.1")).toEqual(Option.some({ input: 2, cachedInput: 0.5, output: 8 }))
    expect(priceFor("gpt-4.1-2025-04-14")).toEqual(priceFor("gpt-4.1"))
    expect(priceFor("gpt-4.1-mini")).toEqual(Option.some({ input: 0.4, cachedInput: 0.1, output: 1.6 }))
    expect(priceFor("anthropic/claude-sonnet-4-20250514").pipe(Option.map((p) => p.output))).toEqual(Option.some(15))
    expect(priceFor("llama3.1:8b")).toEqual(Option.none())
  })

  it("charges cached input at the cached rate, in cents", () => {
    const price = { input: 2, cachedInput: 0.5, output: 8 }
    // 1M input of which 400k cached, 100k output: 0.6·2 + 0.4·0.5 + 0.1·8 = 2.2 USD
    expect(costCents(price, { inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 100_000 }))
      .toBeCloseTo(220, 6)
    expect(costCents(price, {})).toBe(0)
  })

  it("lets a config record override or add prices", () => {
    const overrides = {
      "gpt-4.1": { input: 1, cachedInput: 1, output: 1 },
      "my-org/private-model": { input: 10, cachedInput: 10, output: 10 }
    }
    const usage = { inputTokens: 1_000_000, outputTokens: 0 }
    expect(usageCostCents("openai/gpt-4.1", usage, overrides)).toBeCloseTo(100, 6)
    expect(usageCostCents("my-org/private-model", usage, overrides)).toBeCloseTo(1000, 6)
    expect(usageCostCents("gpt-4o", usage, overrides)).toBeCloseTo(250, 6)
    expect(usageCostCents("unknown-local-model", usage, overrides)).toBe(0)
  })
})
