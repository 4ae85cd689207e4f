import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { planRollups } from "../../src/context/rollup.js"
import { type Segment, segmentation } from "../../src/context/Segment.js"
import { level0, rollUpAll, segment } from "./segmentTree.js"

const fanout = segmentation.fanout

/** Random L0 segments: contiguous lengths, some unsummarized. */
const l0Segments = fc
  .tuple(
    fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 260 }),
    fc.array(fc.nat(259), { maxLength: 4 })
  )
  .map(([lengths, holes]) => level0(lengths, { unsummarized: new Set(holes) }))

/** Checks one call's plans against the segments it was given. */
const checkPlans = (segments: ReadonlyArray<Segment>) => {
  const plans = planRollups(segments)
  const used = new Set<number>()
  let previous: { level: number; start: number } | undefined
  for (const plan of plans) {
    expect(plan.children).toHaveLength(fanout)
    for (const [i, child] of plan.children.entries()) {
      // Only existing, summarized roots one level down, each in at most one plan.
      expect(segments).toContain(child)
      expect(child.parentId).toBeNull()
      expect(child.summary).not.toBeNull()
      expect(child.level).toBe(plan.level - 1)
      expect(used.has(child.id)).toBe(false)
      used.add(child.id)
      if (i > 0) expect(child.start).toBe(plan.children[i - 1]!.end)
    }
    const start = plan.children[0]!.start
    if (previous !== undefined) {
      expect(plan.level > previous.level || (plan.level === previous.level && start > previous.start)).toBe(true)
    }
    previous = { level: plan.level, start }
  }
  return plans
}

describe("planRollups", () => {
  it("plans groups of 10 contiguous summarized roots of one level, ordered by level then start", () => {
    fc.assert(fc.property(l0Segments, (segments) => {
      checkPlans(segments)
      // Stored level by level as the segment pass does, every intermediate call keeps the same guarantees.
      let all = [...segments]
      let nextId = 10_000
      for (let round = 0; round < 5; round++) {
        const plans = checkPlans(all)
        if (plans.length === 0) {
          // Nothing left to plan means no run of ten contiguous summarized roots before a level's first hole.
          for (const level of new Set(all.map((s) => s.level))) {
            const roots = all.filter((s) => s.level === level && s.parentId === null).sort((a, b) => a.start - b.start)
            let run = 0
            for (const [i, root] of roots.entries()) {
              if (root.summary === null) break
              run = i > 0 && root.start === roots[i - 1]!.end ? run + 1 : 1
              expect(run).toBeLessThan(fanout)
            }
          }
          break
        }
        for (const plan of plans) {
          const parent = segment({
            id: nextId++,
            level: plan.level,
            start: plan.children[0]!.start,
            end: plan.children[fanout - 1]!.end
          })
          const ids = new Set(plan.children.map((c) => c.id))
          all = all.map((s) => (ids.has(s.id) ? segment({ ...s, parentId: parent.id }) : s))
          all.push(parent)
        }
      }
    }), { numRuns: 200 })
  })

  it("rolls a fully summarized history up level by level: counts are floor(n / 10) per level", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1_250 }), (count) => {
      const all = rollUpAll(level0(Array.from({ length: count }, () => 3)))
      let expected = count
      for (let level = 1; expected >= fanout; level++) {
        expected = Math.floor(expected / fanout)
        const parents = all.filter((s) => s.level === level).sort((a, b) => a.start - b.start)
        expect(parents).toHaveLength(expected)
        // Each parent spans exactly its ten children, which are contiguous.
        for (const parent of parents) {
          const children = all.filter((s) => s.parentId === parent.id).sort((a, b) => a.start - b.start)
          expect(children).toHaveLength(fanout)
          expect(children[0]!.start).toBe(parent.start)
          expect(children[fanout - 1]!.end).toBe(parent.end)
        }
      }
      expect(all.filter((s) => s.level > 0 && Math.floor(count / fanout ** s.level) === 0)).toHaveLength(0)
    }), { numRuns: 60 })
  })

  it("plans only from roots that exist: a level's new parents roll up in the next call", () => {
    const plans = planRollups(level0(Array.from({ length: 100 }, () => 2)))
    expect(plans).toHaveLength(10)
    expect(plans.every((plan) => plan.level === 1)).toBe(true)
    expect(plans.map((plan) => plan.children[0]!.start)).toEqual(Array.from({ length: 10 }, (_, i) => i * 20))
  })

  it("stops at an unsummarized root: it must be summarized first", () => {
    const segments = level0(Array.from({ length: 35 }, () => 2), { unsummarized: new Set([14]) })
    const plans = planRollups(segments)
    expect(plans.map((plan) => plan.children.map((c) => c.id))).toEqual([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]])
  })

  it("starts a group again after a gap, and never groups roots that already have a parent", () => {
    const before = level0(Array.from({ length: 5 }, () => 2))
    const after = level0(Array.from({ length: 12 }, () => 2)).map((s) =>
      segment({ ...s, id: s.id + 100, start: s.start + 50, end: s.end + 50 })
    )
    const plans = planRollups([...before, ...after])
    expect(plans.map((plan) => plan.children.map((c) => c.id))).toEqual([[101, 102, 103, 104, 105, 106, 107, 108, 109, 110]])
    const adopted = after.map((s) => (s.id <= 105 ? segment({ ...s, parentId: 999 }) : s))
    expect(planRollups([...before, ...adopted])).toEqual([])
  })

  it("rolls up the roots of a level above 0 when ten of them are contiguous and summarized", () => {
    const l1 = Array.from({ length: 10 }, (_, i) => segment({ id: i + 1, level: 1, start: i * 100, end: (i + 1) * 100 }))
    const plans = planRollups(l1)
    expect(plans).toHaveLength(1)
    expect(plans[0]!.level).toBe(2)
    expect(planRollups(l1.map((s) => (s.id === 10 ? segment({ ...s, summary: null }) : s)))).toEqual([])
  })
})
