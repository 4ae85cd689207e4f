import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Tokenizer, tokensUpTo } from "../../src/model/tokenizer.js"

describe("tokenizer", () => {
  it.effect("counts o200k_base tokens, the same text the same way", () =>
    Effect.gen(function*() {
      const count = yield* (yield* Tokenizer).counter
      expect(count("")).toBe(0)
      expect(count("hello world")).toBe(2)
      const text = "Recall finds every past conversation. ".repeat(50)
      expect(count(text)).toBe(count(text))
      expect(count(text)).toBeGreaterThan(200)
      expect(count(text)).toBeLessThan(text.length)
    }).pipe(Effect.provide(Tokenizer.Default)))

  it("tokensUpTo counts only when the byte length leaves the limit in doubt, and never under-counts", () => {
    let calls = 0
    const counting = (text: string) => {
      calls++
      return Math.ceil(text.length / 4)
    }
    expect(tokensUpTo("short", 10, counting)).toBe(5)
    expect(calls).toBe(0)
    // Multi-byte characters count by their bytes: an upper bound on tokens, so the bound holds.
    expect(tokensUpTo("ééé", 10, counting)).toBe(6)
    expect(tokensUpTo("x".repeat(40), 10, counting)).toBe(10)
    expect(calls).toBe(1)
  })
})
