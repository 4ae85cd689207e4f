import { type Segment, segmentation } from "./Segment.js"

/** A parent to create: `level` one above its children, spanning exactly their messages. */
export interface PlannedRollup {
  readonly level: number
  readonly children: ReadonlyArray<Segment>
}

/**
 * Parents to create now: every 10 (segmentation.fanout) contiguous, summarized, root segments of one level.
 *
 * Per level, the roots (parentId null) are taken oldest first and grouped greedily: a group is `fanout` roots each
 * starting where the previous ended, all summarized. A gap starts a new group after it; an unsummarized root stops
 * grouping at its level, since a parent's summary is written from its children's and the roots after it must wait
 * for it to keep the tree's levels in message order. Parents planned here are not stored yet, so they do not group
 * into a level above in the same call: the caller stores them and calls again. Ordered by level, then start.
 */
export const planRollups = (segments: ReadonlyArray<Segment>): ReadonlyArray<PlannedRollup> => {
  const byLevel = new Map<number, Array<Segment>>()
  for (const segment of segments) {
    if (segment.parentId !== null) continue
    const level = byLevel.get(segment.level)
    if (level === undefined) byLevel.set(segment.level, [segment])
    else level.push(segment)
  }
  const out: Array<PlannedRollup> = []
  for (const level of [...byLevel.keys()].sort((a, b) => a - b)) {
    const roots = byLevel.get(level)!.sort((a, b) => a.start - b.start)
    let group: Array<Segment> = []
    for (const root of roots) {
      if (root.summary === null) break
      const previous = group[group.length - 1]
      if (previous !== undefined && root.start !== previous.end) group = []
      group.push(root)
      if (group.length === segmentation.fanout) {
        out.push({ level: level + 1, children: group })
        group = []
      }
    }
  }
  return out
}
