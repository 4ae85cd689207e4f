import { Arbitrary, Either, FastCheck as fc, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { ContextSegmentsResponse, type SegmentInfo, SegmentsResponse } from "../../../../src/channels/web/api.js"
import { buildTree, compression, cutLine, messageRange } from "../../../../src/channels/web/ui/memory/segmentTree.js"
import { decodeContextSegments, decodeSegments, type Json, parseJson } from "../../../../src/channels/web/ui/wire.js"

const at = "2026-11-23T08:00:00.000Z"
const segment = (id: number, level: number, start: number, end: number, parentId: number | null, inContext = false): SegmentInfo => ({
  id,
  level,
  start,
  end,
  tokens: (end - start) * 100,
  summaryTokens: 50,
  summary: `summary ${id}`,
  firstAt: at,
  lastAt: at,
  parentId,
  inContext
})

/** What the browser gets: the value through JSON, as the server sends it. */
const overTheWire = (value: unknown): Json | undefined => parseJson(JSON.stringify(value))

describe("segment tree", () => {
  // L1 #100 over L0 #1–#3, two loose L0s after it, and an L0 whose parent the server left out.
  const segments = [
    segment(1, 0, 0, 10, 100),
    segment(2, 0, 10, 20, 100),
    segment(3, 0, 20, 30, 100),
    segment(100, 1, 0, 30, null, true),
    segment(4, 0, 30, 40, null, true),
    segment(5, 0, 40, 50, null),
    segment(6, 0, 50, 60, 999)
  ]

  it("puts segments without a known parent at the root, newest first, and children under their parent, newest first", () => {
    const tree = buildTree(segments)
    expect(tree.roots.map((s) => s.id)).toEqual([6, 5, 4, 100])
    expect(tree.children.get(100)?.map((s) => s.id)).toEqual([3, 2, 1])
    expect(tree.inContext.map((s) => s.id)).toEqual([4, 100])
  })

  it("places every segment exactly once, whatever the parent links", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { minLength: 0, maxLength: 30 }).chain((ids) =>
          fc.tuple(fc.constant(ids), fc.array(fc.option(fc.integer({ min: 0, max: 45 }), { nil: null }), { minLength: ids.length, maxLength: ids.length }))
        ),
        ([ids, parents]) => {
          const list = ids.map((id, i) => segment(id, 0, id * 10, id * 10 + 10, parents[i] ?? null))
          const tree = buildTree(list)
          // Reachable from the roots, each id once: no segment lost to a missing parent, none drawn twice.
          const seen: Array<number> = []
          const walk = (s: SegmentInfo, depth: number): void => {
            if (depth > list.length) return
            seen.push(s.id)
            for (const k of tree.children.get(s.id) ?? []) walk(k, depth + 1)
          }
          for (const r of tree.roots) walk(r, 0)
          const reachable = new Set(seen)
          // Segments in a parent cycle (a→b→a) are unreachable from any root, but never duplicated.
          expect(seen.length).toBe(reachable.size)
          const acyclic = list.every((s) => {
            const visited = new Set<number>()
            let p: number | null = s.parentId
            while (p !== null && !visited.has(p)) {
              visited.add(p)
              p = list.find((x) => x.id === p)?.parentId ?? null
            }
            return p === null
          })
          if (acyclic) expect(reachable.size).toBe(list.length)
        }
      )
    )
  })

  it("says the figures a row shows", () => {
    expect(compression({ tokens: 15230, summaryTokens: 980 })).toBe("15,230 → 980 tokens, 15.5:1")
    expect(compression({ tokens: 15230, summaryTokens: 0 })).toBeUndefined()
    expect(messageRange({ start: 0, end: 1500 })).toBe("messages 0–1,499")
    expect(messageRange({ start: 7, end: 8 })).toBe("message 7")
    expect(cutLine(1200, 900)).toBe("messages 0–899 summarized, 900… raw (300 messages)")
    expect(cutLine(40, 0)).toBe("nothing summarized: all 40 messages are sent raw")
  })
})

describe("segments on the wire", () => {
  it("decodes what api.ts's SegmentsResponse encodes, and nothing the Schema refuses", () => {
    fc.assert(
      fc.property(Arbitrary.make(SegmentsResponse), (value) => {
        const json = overTheWire(Schema.encodeSync(SegmentsResponse)(value))
        const bySchema = Schema.decodeUnknownEither(SegmentsResponse)(json)
        const byUi = decodeSegments(json)
        // JSON turns NaN and ±Infinity into null: then the Schema refuses, and the UI drops what it cannot read.
        if (Either.isRight(bySchema)) expect(byUi).toEqual(bySchema.right)
        if (byUi !== undefined) expect(Schema.is(SegmentsResponse)(byUi)).toBe(true)
      })
    )
  })

  it("decodes what api.ts's ContextSegmentsResponse encodes, and nothing the Schema refuses", () => {
    fc.assert(
      fc.property(Arbitrary.make(ContextSegmentsResponse), (value) => {
        const json = overTheWire(Schema.encodeSync(ContextSegmentsResponse)(value))
        const bySchema = Schema.decodeUnknownEither(ContextSegmentsResponse)(json)
        const byUi = decodeContextSegments(json)
        if (Either.isRight(bySchema)) expect(byUi).toEqual(bySchema.right)
        if (byUi !== undefined) expect(Schema.is(ContextSegmentsResponse)(byUi)).toBe(true)
      })
    )
  })

  it("leaves out a segment that does not decode, and refuses an answer that is not the shape (a 501 body)", () => {
    const good = segment(1, 0, 0, 10, null)
    const answer = decodeSegments(overTheWire({ sessionId: "s", messages: 10, cut: 0, segments: [good, { ...good, id: "1" }, { ...good, summary: 5 }] }))
    expect(answer?.segments).toEqual([good])
    expect(decodeSegments(overTheWire({ error: "not built", feature: "context" }))).toBeUndefined()
    expect(decodeContextSegments(overTheWire({ error: "not built", feature: "context" }))).toBeUndefined()
  })
})
