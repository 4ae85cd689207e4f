// The Segments tab's pure part: the tree built from GET /segments' flat list, and the figures each row says.
import type { SegmentInfo } from "../../api.js"

export interface SegmentTree {
  /** Segments without a parent in the list, newest first. */
  readonly roots: ReadonlyArray<SegmentInfo>
  /** Children by parent id, newest first. */
  readonly children: ReadonlyMap<number, ReadonlyArray<SegmentInfo>>
  /** The segments whose summaries the model gets now, newest first. */
  readonly inContext: ReadonlyArray<SegmentInfo>
}

// Newest first, as the Sessions tab lists sessions; a parent before a child that starts where it does.
const newestFirst = (a: SegmentInfo, b: SegmentInfo) => b.start - a.start || b.level - a.level || b.id - a.id

export const buildTree = (segments: ReadonlyArray<SegmentInfo>): SegmentTree => {
  const known = new Set(segments.map((s) => s.id))
  const children = new Map<number, Array<SegmentInfo>>()
  const roots: Array<SegmentInfo> = []
  for (const s of segments) {
    // A parent the server left out (or a cycle onto itself) must not hide its children: they become roots.
    if (s.parentId === null || s.parentId === s.id || !known.has(s.parentId)) roots.push(s)
    else children.set(s.parentId, [...(children.get(s.parentId) ?? []), s])
  }
  for (const list of children.values()) list.sort(newestFirst)
  return { roots: roots.sort(newestFirst), children, inContext: segments.filter((s) => s.inContext).sort(newestFirst) }
}

const n = (x: number) => x.toLocaleString()

/** "messages 0–1,499": `end` is exclusive. */
export const messageRange = (s: Pick<SegmentInfo, "start" | "end">): string =>
  s.end - s.start <= 1 ? `message ${n(s.start)}` : `messages ${n(s.start)}–${n(s.end - 1)}`

/** "15,230 → 980 tokens, 15.5:1"; undefined while unsummarized (nothing to compare). */
export const compression = (s: Pick<SegmentInfo, "tokens" | "summaryTokens">): string | undefined =>
  s.summaryTokens <= 0 ? undefined : `${n(s.tokens)} → ${n(s.summaryTokens)} tokens, ${(s.tokens / s.summaryTokens).toFixed(1)}:1`

const parsed = (iso: string): Date | undefined => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? undefined : d
}

/** A timestamp as the reader's clock shows it; the server's text when it is not a date. */
export const when = (iso: string): string => parsed(iso)?.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) ?? iso

/** "Nov 23, 2026, 8:00 AM – 9:10 AM": the end's date is left out when it is the start's. */
export const timeRange = (firstAt: string, lastAt: string): string => {
  const first = parsed(firstAt)
  const last = parsed(lastAt)
  if (first === undefined || last === undefined) return `${when(firstAt)} – ${when(lastAt)}`
  const sameDay = first.toDateString() === last.toDateString()
  return `${when(firstAt)} – ${sameDay ? last.toLocaleTimeString(undefined, { timeStyle: "short" }) : when(lastAt)}`
}

/** What the cut means for the session: which messages the model sees as summaries and which raw. */
export const cutLine = (messages: number, cut: number): string => {
  const raw = Math.max(0, messages - cut)
  if (cut <= 0) return `nothing summarized: all ${n(messages)} messages are sent raw`
  if (raw === 0) return `messages 0–${n(cut - 1)} summarized, none raw`
  return `messages 0–${n(cut - 1)} summarized, ${n(cut)}… raw (${n(raw)} ${raw === 1 ? "message" : "messages"})`
}
