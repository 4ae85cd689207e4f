import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  composeHistory,
  conversationFrameTokens,
  renderConversationSummary,
  summaryCost,
  summaryFrameTokens
} from "../../src/context/composeHistory.js"
import type { Segment } from "../../src/context/Segment.js"
import { level0, rollUpAll, segment } from "./segmentTree.js"

/** A rolled-up tree over `count` L0 segments of 10 messages, summaries of varying size, some holes. */
const tree = fc
  .record({
    count: fc.integer({ min: 0, max: 230 }),
    sizes: fc.array(fc.integer({ min: 20, max: 600 }), { minLength: 1, maxLength: 17 }),
    holes: fc.array(fc.nat(229), { maxLength: 3 }),
    // A parent whose summary failed: it stays in the tree without one.
    failedParents: fc.array(fc.nat(30), { maxLength: 2 })
  })
  .map(({ count, sizes, holes, failedParents }) => {
    const l0 = level0(Array.from({ length: count }, () => 10), {
      unsummarized: new Set(holes),
      summaryTokens: (i) => sizes[i % sizes.length]!
    })
    const all = rollUpAll(l0, (level) => 150 * level)
    const parents = all.filter((s) => s.level > 0)
    const failed = new Set(failedParents.map((i) => parents[i % Math.max(1, parents.length)]?.id))
    return all.map((s) => (failed.has(s.id) ? segment({ ...s, summary: null }) : s))
  })

const cost = (chosen: ReadonlyArray<Segment>) =>
  chosen.length === 0 ? 0 : chosen.reduce((sum, s) => sum + summaryCost(s), 0) + conversationFrameTokens

const childrenOf = (all: ReadonlyArray<Segment>, parent: Segment) =>
  all.filter((s) => s.parentId === parent.id).sort((a, b) => a.start - b.start)

/** The summarized segments that can stand for [0, cut) at the coarsest: roots, or their children when unsummarized. */
const rootsCost = (all: ReadonlyArray<Segment>, cut: number): number => {
  const out: Array<Segment> = []
  const stand = (s: Segment) => {
    if (s.start >= cut) return
    if (s.summary !== null) out.push(s)
    else for (const c of childrenOf(all, s)) stand(c)
  }
  for (const root of all.filter((s) => s.parentId === null)) stand(root)
  return cost(out)
}

describe("composeHistory", () => {
  it("never goes over budget, keeps message order, and accounts for every message before the cut", () => {
    fc.assert(
      fc.property(tree, fc.nat(2_400), fc.nat(60_000), (all, cutAt, budget) => {
        const end = all.reduce((max, s) => Math.max(max, s.end), 0)
        const cut = Math.min(cutAt, end)
        const composed = composeHistory(all, cut, budget)
        expect(composed.tokens).toBeLessThanOrEqual(budget)
        expect(composed.tokens).toBe(cost(composed.chosen))
        const covered: Array<{ start: number; end: number }> = []
        for (const [i, s] of composed.chosen.entries()) {
          expect(s.summary).not.toBeNull()
          expect(s.start).toBeLessThan(cut)
          if (i > 0) expect(s.start).toBeGreaterThanOrEqual(composed.chosen[i - 1]!.end)
          covered.push({ start: s.start, end: Math.min(s.end, cut) })
        }
        // Chosen and uncovered ranges together tile [0, cut) exactly.
        const tiles = [...covered, ...composed.uncovered].sort((a, b) => a.start - b.start)
        let at = 0
        for (const tile of tiles) {
          expect(tile.start).toBe(at)
          expect(tile.end).toBeGreaterThan(tile.start)
          at = tile.end
        }
        expect(at).toBe(cut)
        // Nothing summarized is left out when the coarsest summaries fit.
        if (rootsCost(all, cut) <= budget) {
          // Then a gap is only ever unsummarized L0 segments, end to end.
          const unsummarized = all.filter((s) => s.level === 0 && s.summary === null)
          for (const gap of composed.uncovered) {
            let at = gap.start
            for (;;) {
              const hole = unsummarized.find((s) => s.start === at)
              expect(hole).toBeDefined()
              at = Math.min(hole!.end, cut)
              if (at >= gap.end) break
            }
            expect(at).toBe(gap.end)
          }
        }
        // Breadth-first greedy leaves no parent that could still be expanded within what is left (the fixture's
        // parents are always smaller than their children together, as real summaries are).
        const left = budget - composed.tokens
        for (const s of composed.chosen) {
          const kids = childrenOf(all, s).filter((c) => c.start < cut)
          if (s.level === 0 || kids.length === 0 || kids.some((c) => c.summary === null)) continue
          expect(cost(kids) - cost([s])).toBeGreaterThan(left)
        }
      }),
      { numRuns: 300 }
    )
  })

  describe("on a full tree: 100 L0, 10 L1, one L2, every summary 100 tokens", () => {
    const all = rollUpAll(level0(Array.from({ length: 100 }, () => 10)))
    const block = 100 + summaryFrameTokens
    const levels = (chosen: ReadonlyArray<Segment>) => chosen.map((s) => s.level)

    it("uses the highest level when the budget is small", () => {
      const composed = composeHistory(all, 1_000, block + conversationFrameTokens)
      expect(levels(composed.chosen)).toEqual([2])
      expect(composed.uncovered).toEqual([])
    })

    it("expands level by level, newest first within a level", () => {
      const tenL1 = 10 * block + conversationFrameTokens
      expect(levels(composeHistory(all, 1_000, tenL1).chosen)).toEqual(Array(10).fill(1))
      // Room for one L1 to open into its ten L0s: the newest one does.
      const composed = composeHistory(all, 1_000, tenL1 + 9 * block)
      expect(levels(composed.chosen)).toEqual([...Array(9).fill(1), ...Array(10).fill(0)])
      expect(composed.chosen[9]!.start).toBe(900)
    })

    it("expands everything to L0 when the budget is big", () => {
      const composed = composeHistory(all, 1_000, 1_000_000)
      expect(levels(composed.chosen)).toEqual(Array(100).fill(0))
      expect(composed.tokens).toBe(100 * block + conversationFrameTokens)
    })

    it("takes a parent that straddles the cut, and only the children before the cut when it opens", () => {
      const small = composeHistory(all, 455, block + conversationFrameTokens)
      expect(levels(small.chosen)).toEqual([2])
      const big = composeHistory(all, 455, 1_000_000)
      expect(big.chosen.map((s) => s.start)).toEqual(Array.from({ length: 46 }, (_, i) => i * 10))
      expect(big.uncovered).toEqual([])
    })

    it("drops the oldest roots when even they do not fit, and reports them uncovered", () => {
      const roots = all.filter((s) => s.level === 1).map((s) => segment({ ...s, parentId: null }))
      const composed = composeHistory(roots, 1_000, 3 * block + conversationFrameTokens)
      expect(composed.chosen.map((s) => s.start)).toEqual([700, 800, 900])
      expect(composed.uncovered).toEqual([{ start: 0, end: 700 }])
      expect(composeHistory(roots, 1_000, 0)).toEqual({ chosen: [], tokens: 0, uncovered: [{ start: 0, end: 1_000 }] })
    })

    it("stands a parent whose summary is missing by its children", () => {
      const withoutTop = all.map((s) => (s.level === 2 ? segment({ ...s, summary: null }) : s))
      const composed = composeHistory(withoutTop, 1_000, 10 * block + conversationFrameTokens)
      expect(levels(composed.chosen)).toEqual(Array(10).fill(1))
      expect(composed.uncovered).toEqual([])
    })

    it("leaves nothing to compose before message 0", () => {
      expect(composeHistory(all, 0, 10_000)).toEqual({ chosen: [], tokens: 0, uncovered: [] })
    })
  })
})

describe("renderConversationSummary", () => {
  it("renders the seed's block: level, inclusive message range, first and last times, the text", () => {
    const rendered = renderConversationSummary([
      segment({ id: 1, level: 2, start: 0, end: 4_501, summary: "early work\n" }),
      segment({ id: 2, level: 0, start: 20_766, end: 20_794, summary: "detailed recent summary" })
    ])
    expect(rendered).toBe(
      [
        "<conversation_summary>",
        "<summary>",
        "level: L2",
        "messages: 0-4500",
        "first: 2026-04-03T06:00:00.000Z",
        "last: 2026-04-03T07:15:00.000Z",
        "early work",
        "</summary>",
        "<summary>",
        "level: L0",
        "messages: 20766-20793",
        "first: 2026-04-03T11:46:06.000Z",
        "last: 2026-04-03T11:46:33.000Z",
        "detailed recent summary",
        "</summary>",
        "</conversation_summary>"
      ].join("\n")
    )
  })
})
