import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { segmentation } from "../../src/context/Segment.js"
import {
  planSegments,
  type SegmentableMessage,
  segmentationDue,
  turnEdgeSimilarity
} from "../../src/context/segmentation.js"

const { targetTokens, minTokens, minMessages, maxTokens } = segmentation

const prefixOf = (messages: ReadonlyArray<SegmentableMessage>): Array<number> => {
  const prefix = [0]
  for (const m of messages) prefix.push(prefix[prefix.length - 1]! + m.tokens)
  return prefix
}

/** Messages of mostly ordinary sizes, some big tool outputs and now and then one larger than a whole segment. */
const anyMessage: fc.Arbitrary<SegmentableMessage> = fc.record({
  tokens: fc.oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0, max: 1_500 }) },
    { weight: 3, arbitrary: fc.integer({ min: 1_500, max: 12_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 12_000, max: 45_000 }) }
  ),
  isUser: fc.boolean()
})

/** Turns: a user message then up to four replies or tool steps, none over 2,000 tokens. */
const chattyMessages: fc.Arbitrary<Array<SegmentableMessage>> = fc
  .array(
    fc.tuple(fc.integer({ min: 1, max: 2_000 }), fc.array(fc.integer({ min: 1, max: 2_000 }), { maxLength: 4 })),
    { minLength: 1, maxLength: 150 }
  )
  .map((turns) =>
    turns.flatMap(([user, replies]) => [
      { tokens: user, isUser: true },
      ...replies.map((tokens) => ({ tokens, isUser: false }))
    ])
  )

/** Every guarantee planSegments states, checked on one input. */
const checkPlan = (messages: ReadonlyArray<SegmentableMessage>, similarity?: ReadonlyArray<number | undefined>) => {
  const plan = planSegments(messages, similarity)
  const prefix = prefixOf(messages)
  const n = messages.length
  const span = (a: number, b: number) => prefix[b]! - prefix[a]!
  let at = 0
  for (const [i, seg] of plan.entries()) {
    // Contiguous from 0, non-empty, tokens as summed.
    expect(seg.start).toBe(at)
    expect(seg.end).toBeGreaterThan(seg.start)
    expect(seg.end).toBeLessThanOrEqual(n)
    expect(seg.tokens).toBe(span(seg.start, seg.end))
    at = seg.end
    const single = seg.end - seg.start === 1
    // Never over max, except one message that alone is; an oversized message is always alone.
    if (seg.tokens > maxTokens) expect(single).toBe(true)
    for (let m = seg.start; m < seg.end; m++) {
      if (messages[m]!.tokens > maxTokens) expect(single).toBe(true)
    }
    if (single && seg.tokens > maxTokens) continue
    // Under min only where max forbade more.
    if (seg.tokens < minTokens) {
      expect(seg.end).toBeLessThan(n)
      expect(seg.tokens + messages[seg.end]!.tokens).toBeGreaterThan(maxTokens)
      const previous = plan[i - 1]
      if (previous !== undefined) expect(previous.tokens + seg.tokens).toBeGreaterThan(maxTokens)
    }
    if (seg.end - seg.start < minMessages) {
      const tenMore = seg.start + minMessages
      expect(tenMore > n || span(seg.start, tenMore) > maxTokens).toBe(true)
    }
  }
  // What is left unsegmented is one small tail that could not join the segment before it.
  if (at < n) {
    const rest = span(at, n)
    expect(rest).toBeLessThanOrEqual(maxTokens)
    expect(rest < minTokens || n - at < minMessages).toBe(true)
    const last = plan[plan.length - 1]
    if (last !== undefined) expect(last.tokens + rest).toBeGreaterThan(maxTokens)
  }
  return plan
}

describe("segmentationDue", () => {
  it("needs both 10 messages and 10k tokens", () => {
    expect(segmentationDue(10, 10_000)).toBe(true)
    expect(segmentationDue(9, 50_000)).toBe(false)
    expect(segmentationDue(500, 9_999)).toBe(false)
    fc.assert(
      fc.property(fc.nat(100), fc.nat(40_000), (messages, tokens) => {
        expect(segmentationDue(messages, tokens)).toBe(messages >= 10 && tokens >= 10_000)
      })
    )
  })
})

describe("planSegments", () => {
  it("is contiguous and keeps min/max except where an oversized message or max forbids it", () => {
    fc.assert(fc.property(fc.array(anyMessage, { maxLength: 300 }), (messages) => {
      checkPlan(messages)
    }), { numRuns: 300 })
  })

  it("keeps its guarantees with arbitrary similarities, unknown ones included", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(anyMessage, fc.option(fc.double({ min: -1, max: 1 }), { nil: undefined })), { maxLength: 300 }),
        (pairs) => {
          checkPlan(pairs.map(([m]) => m), pairs.map(([, s]) => s))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("starts every segment at a user message when turns are small, and segments nearly everything", () => {
    fc.assert(fc.property(chattyMessages, (messages) => {
      const plan = checkPlan(messages)
      for (const seg of plan) expect(messages[seg.start]!.isUser).toBe(true)
      for (const seg of plan) {
        expect(seg.tokens).toBeGreaterThanOrEqual(minTokens)
        expect(seg.end - seg.start).toBeGreaterThanOrEqual(minMessages)
      }
      const total = messages.reduce((sum, m) => sum + m.tokens, 0)
      // Due work never ends with nothing planned: at least the first segment comes out.
      if (segmentationDue(messages.length, total) && total > targetTokens) expect(plan.length).toBeGreaterThan(0)
    }), { numRuns: 300 })
  })

  it("splits a long tool-heavy turn with no user edge at message boundaries near the target", () => {
    const messages: Array<SegmentableMessage> = [
      { tokens: 200, isUser: true },
      ...Array.from({ length: 100 }, () => ({ tokens: 1_000, isUser: false }))
    ]
    const plan = checkPlan(messages)
    expect(plan.map((s) => [s.start, s.end])).toEqual([[0, 16], [16, 31], [31, 46], [46, 61], [61, 76], [76, 91], [
      91,
      101
    ]])
  })

  it("makes an oversized message its own segment instead of blocking", () => {
    const small = (n: number, tokens: number) =>
      Array.from({ length: n }, (_, i) => ({ tokens, isUser: i % 2 === 0 }))
    const messages = [...small(20, 500), { tokens: 80_000, isUser: false }, ...small(30, 500)]
    const plan = checkPlan(messages)
    expect(plan.map((s) => [s.start, s.end])).toEqual([[0, 20], [20, 21], [21, 51]])
  })

  it("without similarity cuts at the first user edge at or after the target", () => {
    // 120 messages of 500 tokens, a user message every other one: the target (15k) is reached at edge 30.
    const messages = Array.from({ length: 120 }, (_, i) => ({ tokens: 500, isUser: i % 2 === 0 }))
    const plan = checkPlan(messages)
    expect(plan[0]).toEqual({ start: 0, end: 30, tokens: 15_000 })
    expect(plan.map((s) => s.end)).toEqual([30, 60, 90, 120])
    // Unknown similarities everywhere behave as none.
    expect(planSegments(messages, messages.map(() => Number.NaN))).toEqual(plan)
  })

  it("with similarity cuts at the dip (topic shift) anywhere in the allowed range", () => {
    const messages = Array.from({ length: 120 }, (_, i) => ({ tokens: 500, isUser: i % 2 === 0 }))
    // The first segment may end at user edges 10..60 (5k..30k tokens, ≥ 10 messages).
    fc.assert(fc.property(fc.integer({ min: 5, max: 30 }), fc.double({ min: 0.5, max: 0.95, noNaN: true }), (half, level) => {
      const dip = half * 2
      const similarity = messages.map((_, i) => (i === dip ? level - 0.4 : level))
      const plan = checkPlan(messages, similarity)
      expect(plan[0]!.end).toBe(dip)
    }))
  })

  it("with close similarities prefers the edge nearest the target", () => {
    const messages = Array.from({ length: 120 }, (_, i) => ({ tokens: 500, isUser: i % 2 === 0 }))
    // 0.80 at 7k tokens against 0.81 at 15k: too close to call a topic shift, so the target wins.
    const similarity = messages.map((_, i) => (i === 14 ? 0.8 : i === 30 ? 0.81 : 0.9))
    expect(planSegments(messages, similarity)[0]!.end).toBe(30)
  })

  it("leaves a too-small region unsegmented", () => {
    expect(planSegments(Array.from({ length: 9 }, () => ({ tokens: 2_000, isUser: true })))).toEqual([])
    expect(planSegments(Array.from({ length: 30 }, () => ({ tokens: 100, isUser: true })))).toEqual([])
  })

  it("prefers an edge whose remainder can stand alone as a segment", () => {
    // 38 × 500 tokens: edge 30 (the target) would leave 8 messages, too few; edge 28 leaves 10.
    const messages = Array.from({ length: 38 }, (_, i) => ({ tokens: 500, isUser: i % 2 === 0 }))
    expect(checkPlan(messages).map((s) => [s.start, s.end])).toEqual([[0, 28], [28, 38]])
  })

  it("leaves a last piece unsegmented when the previous segment cannot take it within max", () => {
    // One 29-message turn of 29k, then a 3k turn: 32k together is over max, and 3k cannot stand alone.
    const messages = [
      ...Array.from({ length: 29 }, (_, i) => ({ tokens: 1_000, isUser: i === 0 })),
      ...Array.from({ length: 3 }, (_, i) => ({ tokens: 1_000, isUser: i === 0 }))
    ]
    expect(checkPlan(messages)).toEqual([{ start: 0, end: 29, tokens: 29_000 }])
  })
})

describe("turnEdgeSimilarity", () => {
  it("marks the turn edge where the topic changes as the least similar", () => {
    const a = [1, 0, 0]
    const b = [0, 1, 0]
    const starts = [0, 3, 6, 9, 12, 15]
    const vectors = [a, a, a, b, b, b]
    const similarity = turnEdgeSimilarity(18, starts, vectors)
    expect(similarity).toHaveLength(18)
    expect(similarity[0]).toBeUndefined()
    expect(similarity[1]).toBeUndefined()
    expect(similarity[3]).toBeCloseTo(1)
    expect(similarity[9]).toBeCloseTo(0)
    expect(similarity[6]! > similarity[9]!).toBe(true)
    expect(similarity[12]! > similarity[9]!).toBe(true)
  })
})
