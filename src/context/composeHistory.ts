import { escapeSectionText, sectionTags } from "./systemPrompt.js"
import type { Segment } from "./Segment.js"

/** A range of messages, `start` inclusive, `end` exclusive. */
export interface MessageRange {
  readonly start: number
  readonly end: number
}

/** The summaries chosen for the messages before the cut, their cost in the budget's tokens, and the gaps left. */
export interface Composed {
  /** In message order. */
  readonly chosen: ReadonlyArray<Segment>
  /** What `chosen` costs as rendered, by `cost`, with the `<conversation_summary>` frame (0 when nothing is chosen). */
  readonly tokens: number
  /** Ranges in [0, cut) no chosen summary covers (an unsummarized L0, or roots dropped to stay within budget). */
  readonly uncovered: ReadonlyArray<MessageRange>
}

/**
 * Tokens of one `<summary>` block's frame around its text (tags, level, range, two timestamps), measured with
 * o200k_base on seven-digit message numbers and rounded up: the budget holds when rendered, not just the text.
 */
export const summaryFrameTokens = 60

/** Tokens of the `<conversation_summary>` tags around the blocks. */
export const conversationFrameTokens = 10

/** What a segment costs in the summary budget by default: its summary and its block's frame. */
export const summaryCost = (segment: Segment): number => segment.summaryTokens + summaryFrameTokens

/**
 * The summaries that stand for messages [0, cut): fills `budget` (summary tokens) breadth-first from the highest
 * level: start from the summarized roots covering [0, cut); then repeatedly expand a parent into its (summarized)
 * children when the difference fits in the budget, higher levels before lower, newest first within a level.
 * Segments entirely at or after `cut` are not needed (they are in the raw window); one that straddles the cut is.
 *
 * Never over budget (by `cost`, default `summaryCost`, plus `conversationFrameTokens`): if even the roots do not fit,
 * the oldest are dropped, since the recent past matters most to the next turn and recall still reaches the rest;
 * what is dropped is reported in `uncovered`. A parent whose own summary is missing stands as its children. Breadth
 * first, so a big budget buys detail evenly across the history rather than all of it in one corner.
 */
export const composeHistory = (
  segments: ReadonlyArray<Segment>,
  cut: number,
  budget: number,
  cost: (segment: Segment) => number = summaryCost
): Composed => {
  const children = new Map<number, Array<Segment>>()
  const roots: Array<Segment> = []
  for (const segment of segments) {
    if (segment.start >= cut) continue
    if (segment.parentId === null) {
      roots.push(segment)
      continue
    }
    const siblings = children.get(segment.parentId)
    if (siblings === undefined) children.set(segment.parentId, [segment])
    else siblings.push(segment)
  }
  for (const siblings of children.values()) siblings.sort((a, b) => a.start - b.start)
  const childrenOf = (segment: Segment): ReadonlyArray<Segment> => children.get(segment.id) ?? []

  /** The summarized segments standing for `segment`: itself, or what stands for its children when it has none. */
  const standIns = (segment: Segment, into: Array<Segment>): void => {
    if (segment.summary !== null) into.push(segment)
    else for (const child of childrenOf(segment)) standIns(child, into)
  }
  let chosen: Array<Segment> = []
  for (const root of roots.sort((a, b) => a.start - b.start)) standIns(root, chosen)

  const frame = (count: number) => (count === 0 ? 0 : conversationFrameTokens)
  let tokens = 0
  for (const segment of chosen) tokens += cost(segment)
  let dropped = 0
  while (dropped < chosen.length && tokens + frame(chosen.length - dropped) > budget) {
    tokens -= cost(chosen[dropped]!)
    dropped += 1
  }
  chosen = chosen.slice(dropped)

  // Expansion: a parent gives way to its children when all of them (before the cut) are summarized and the
  // difference fits; its children then wait for the next, lower, round.
  let total = chosen.length === 0 ? 0 : tokens + conversationFrameTokens
  let top = 0
  for (const segment of chosen) if (segment.level > top) top = segment.level
  for (let level = top; level >= 1 && chosen.length > 0; level--) {
    const next: Array<Segment> = []
    const expanded = new Map<number, ReadonlyArray<Segment>>()
    for (let i = chosen.length - 1; i >= 0; i--) {
      const parent = chosen[i]!
      if (parent.level !== level) continue
      const kids = childrenOf(parent)
      if (kids.length === 0 || kids.some((kid) => kid.summary === null)) continue
      let delta = -cost(parent)
      for (const kid of kids) delta += cost(kid)
      if (total + delta > budget) continue
      total += delta
      expanded.set(parent.id, kids)
    }
    if (expanded.size === 0) continue
    for (const segment of chosen) {
      const kids = expanded.get(segment.id)
      if (kids === undefined) next.push(segment)
      else next.push(...kids)
    }
    chosen = next
  }

  return { chosen, tokens: chosen.length === 0 ? 0 : total, uncovered: gaps(chosen, cut) }
}

/** The ranges of [0, cut) that no segment of `chosen` (in message order) covers. */
const gaps = (chosen: ReadonlyArray<Segment>, cut: number): ReadonlyArray<MessageRange> => {
  const out: Array<MessageRange> = []
  let at = 0
  for (const segment of chosen) {
    if (segment.start > at) out.push({ start: at, end: Math.min(segment.start, cut) })
    if (segment.end > at) at = segment.end
    if (at >= cut) break
  }
  if (at < cut) out.push({ start: at, end: cut })
  return out
}

/**
 * The `<conversation_summary>` block of the system prompt, one `<summary>` per segment in the order given (message
 * order), as seed 003 shows it: `messages` is the inclusive range, hence `end - 1`. A segment without a summary has
 * nothing to say and is left out; the text is trimmed so a model's trailing newline does not open a blank line. A
 * summary is the model's words about the conversation, so it may quote kern's tags: they are escaped, so it can
 * neither end its block nor the section early.
 */
const summaryTags = [...sectionTags, "summary"]

export const renderConversationSummary = (chosen: ReadonlyArray<Segment>): string => {
  const blocks: Array<string> = []
  for (const segment of chosen) {
    if (segment.summary === null) continue
    blocks.push(
      [
        "<summary>",
        `level: L${segment.level}`,
        `messages: ${segment.start}-${segment.end - 1}`,
        `first: ${segment.firstAt}`,
        `last: ${segment.lastAt}`,
        escapeSectionText(segment.summary.trim(), summaryTags),
        "</summary>"
      ].join("\n")
    )
  }
  return ["<conversation_summary>", ...blocks, "</conversation_summary>"].join("\n")
}
