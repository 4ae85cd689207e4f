import { planRollups } from "../../src/context/rollup.js"
import { Segment } from "../../src/context/Segment.js"

/** Start time of the fake session; message i is at `at(i)`. */
const epoch = Date.parse("2026-04-03T06:00:00.000Z")
export const at = (message: number): string => new Date(epoch + message * 1_000).toISOString()

/** A stored segment as SegmentStore would answer it. */
export const segment = (fields: {
  readonly id: number
  readonly level: number
  readonly start: number
  readonly end: number
  readonly summary?: string | null | undefined
  readonly summaryTokens?: number
  readonly parentId?: number | null
  readonly tokens?: number
}): Segment =>
  new Segment({
    id: fields.id,
    sessionId: "s",
    level: fields.level,
    start: fields.start,
    end: fields.end,
    tokens: fields.tokens ?? (fields.end - fields.start) * 100,
    firstAt: at(fields.start),
    lastAt: at(fields.end - 1),
    summary: fields.summary === undefined ? `summary of L${fields.level} ${fields.start}-${fields.end}` : fields.summary,
    summaryTokens: fields.summaryTokens ?? (fields.summary === null ? 0 : 100),
    parentId: fields.parentId ?? null
  })

/**
 * L0 segments over contiguous message ranges of the given lengths, summarized unless listed in `unsummarized`, each
 * summary `summaryTokens(i)` tokens long.
 */
export const level0 = (
  lengths: ReadonlyArray<number>,
  options: { readonly unsummarized?: ReadonlySet<number>; readonly summaryTokens?: (i: number) => number } = {}
): Array<Segment> => {
  let start = 0
  return lengths.map((length, i) => {
    const summarized = options.unsummarized?.has(i) !== true
    const s = segment({
      id: i + 1,
      level: 0,
      start,
      end: start + length,
      summary: summarized ? undefined : null,
      summaryTokens: summarized ? options.summaryTokens?.(i) ?? 100 : 0
    })
    start += length
    return s
  })
}

/**
 * What the lead's segment pass does with `planRollups`: store each planned parent (summarized with
 * `parentSummaryTokens(level)` tokens, its children's parentId set) and plan again until nothing rolls up.
 */
export const rollUpAll = (
  segments: ReadonlyArray<Segment>,
  parentSummaryTokens: (level: number) => number = () => 100
): Array<Segment> => {
  let all = [...segments]
  let nextId = all.reduce((max, s) => Math.max(max, s.id), 0) + 1
  for (;;) {
    const plans = planRollups(all)
    if (plans.length === 0) return all
    for (const plan of plans) {
      const first = plan.children[0]!
      const last = plan.children[plan.children.length - 1]!
      const parent = segment({
        id: nextId++,
        level: plan.level,
        start: first.start,
        end: last.end,
        tokens: plan.children.reduce((sum, c) => sum + c.tokens, 0),
        summaryTokens: parentSummaryTokens(plan.level)
      })
      const ids = new Set(plan.children.map((c) => c.id))
      all = all.map((s) => (ids.has(s.id) ? new Segment({ ...s, parentId: parent.id }) : s))
      all.push(parent)
    }
  }
}
