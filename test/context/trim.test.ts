import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { chooseCut, rawRefill, type TrimInput } from "../../src/context/trim.js"

const rawFrom = (input: TrimInput, from: number): number => {
  let total = 0
  for (let i = from - input.base; i < input.tokens.length; i++) total += input.tokens[i]!
  return total
}

/** The user message at or before `e` and after the old cut (a cut at the end would leave no raw message). */
const walkBack = (input: TrimInput, e: number): number | undefined => {
  const end = input.base + input.tokens.length
  for (let u = Math.min(e, end - 1); u > input.cut; u--) if (input.isUser[u - input.base]) return u
  return undefined
}

/** The rule written the slow, obvious way. */
const reference = (input: TrimInput): number => {
  const end = input.base + input.tokens.length
  if (rawFrom(input, input.cut) <= input.rawBudget) return input.cut
  let d = input.cut
  while (d < end && rawFrom(input, d) > rawRefill * input.rawBudget) d++
  const places = input.segmentEnds
    .filter((e) => e > input.cut && e <= Math.min(input.coveredEnd, end))
    .map((e) => walkBack(input, e))
    .filter((u): u is number => u !== undefined)
  if (places.length === 0) return input.cut
  const enough = places.filter((u) => u >= d)
  return enough.length > 0 ? Math.min(...enough) : Math.max(...places)
}

/** A held window with random sizes, turns, segment ends (some past the end) and coverage. */
const trimInput: fc.Arbitrary<TrimInput> = fc
  .record({
    base: fc.nat(50),
    messages: fc.array(fc.record({ tokens: fc.nat(3_000), isUser: fc.boolean() }), { maxLength: 120 }),
    cutAt: fc.nat(),
    ends: fc.uniqueArray(fc.nat(126), { maxLength: 40 }),
    covered: fc.nat(126),
    rawBudget: fc.nat(60_000)
  })
  .map(({ base, messages, cutAt, ends, covered, rawBudget }) => ({
    base,
    tokens: messages.map((m) => m.tokens),
    isUser: messages.map((m) => m.isUser),
    cut: base + (cutAt % (messages.length + 1)),
    rawBudget,
    segmentEnds: ends.map((e) => base + e).sort((a, b) => a - b),
    coveredEnd: base + covered
  }))

describe("chooseCut", () => {
  it("follows the rule exactly (against a slow reference)", () => {
    fc.assert(fc.property(trimInput, (input) => {
      expect(chooseCut(input)).toBe(reference(input))
    }), { numRuns: 2_000 })
  })

  it("holds the cut while the raw window fits its budget", () => {
    fc.assert(fc.property(trimInput, (input) => {
      fc.pre(rawFrom(input, input.cut) <= input.rawBudget)
      expect(chooseCut(input)).toBe(input.cut)
    }), { numRuns: 500 })
  })

  it("only moves forward, never past coveredEnd, and starts the raw window at a user message", () => {
    fc.assert(fc.property(trimInput, (input) => {
      const cut = chooseCut(input)
      expect(cut).toBeGreaterThanOrEqual(input.cut)
      if (cut === input.cut) return
      expect(cut).toBeLessThanOrEqual(input.coveredEnd)
      expect(cut).toBeLessThan(input.base + input.tokens.length)
      // A turn starts here, so no tool call is parted from its result.
      expect(input.isUser[cut - input.base]).toBe(true)
      // Only in reach of a segment end: one at or after it with no user message in between.
      const snapped = input.segmentEnds.find((e) => e >= cut && e <= input.coveredEnd)
      expect(snapped).toBeDefined()
      for (let u = cut + 1; u <= Math.min(snapped!, input.base + input.tokens.length - 1); u++) {
        expect(input.isUser[u - input.base]).toBe(false)
      }
    }), { numRuns: 1_000 })
  })

  it("brings the raw window to the refill share when a place allows it", () => {
    fc.assert(fc.property(trimInput, (input) => {
      const end = input.base + input.tokens.length
      const cut = chooseCut(input)
      fc.pre(cut !== input.cut)
      const top = input.segmentEnds.filter((e) => e > input.cut && e <= Math.min(input.coveredEnd, end)).pop()!
      const reachable = walkBack(input, top)!
      if (rawFrom(input, reachable) <= rawRefill * input.rawBudget) {
        expect(rawFrom(input, cut)).toBeLessThanOrEqual(rawRefill * input.rawBudget)
      } else {
        // No place gets there: it goes as far as it can.
        expect(cut).toBe(reachable)
      }
    }), { numRuns: 1_000 })
  })

  it("leaves the cut where it is without a place to go", () => {
    const input: TrimInput = {
      base: 10,
      tokens: [5_000, 5_000, 5_000, 5_000],
      isUser: [true, false, true, false],
      cut: 10,
      rawBudget: 10_000,
      segmentEnds: [10, 12],
      coveredEnd: 11
    }
    expect(chooseCut(input)).toBe(10)
    // With the summaries caught up the same window moves to the turn at 12.
    expect(chooseCut({ ...input, coveredEnd: 14 })).toBe(12)
  })

  it("is stable when run again on its own answer, as after a restart from the persisted cut", () => {
    fc.assert(fc.property(trimInput, (input) => {
      const cut = chooseCut(input)
      expect(chooseCut({ ...input, cut })).toBe(cut)
    }), { numRuns: 1_000 })
  })

  it("moves rarely over a long conversation and never splits a turn (no summaries: user edges, all covered)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 10, max: 600 }), { minLength: 1, maxLength: 9 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 12_000, max: 30_000 }),
        (turns, rawBudget) => {
          // Held messages from `base` on, as the caller keeps them: the ones before the cut are let go.
          let base = 0
          let tokens: Array<number> = []
          let isUser: Array<boolean> = []
          let cut = 0
          let moves = 0
          for (const turn of turns) {
            // A turn: the user's message, then tool calls and their results, then the reply.
            turn.forEach((size, i) => {
              tokens.push(size)
              isUser.push(i === 0)
            })
            const end = base + tokens.length
            const users = isUser.flatMap((u, i) => (u ? [base + i] : []))
            const input: TrimInput = { base, tokens, isUser, cut, rawBudget, segmentEnds: users, coveredEnd: end }
            const before = rawFrom(input, cut)
            const next = chooseCut(input)
            if (before <= rawBudget) expect(next).toBe(cut)
            if (next !== cut) {
              moves += 1
              expect(isUser[next - base]).toBe(true)
              // Every turn here is under the refill share of the budget, so its user message is always such a place.
              expect(rawFrom(input, next)).toBeLessThanOrEqual(rawRefill * rawBudget)
              tokens = tokens.slice(next - base)
              isUser = isUser.slice(next - base)
              base = next
              cut = next
            }
          }
          // Hysteresis: each move frees at least 40% of the budget, which new turns must fill before the next one.
          const total = turns.flat().reduce((sum, size) => sum + size, 0)
          expect(moves).toBeLessThanOrEqual(Math.max(0, Math.ceil((total - rawBudget) / ((1 - rawRefill) * rawBudget))))
        }
      ),
      { numRuns: 200 }
    )
  })
})
