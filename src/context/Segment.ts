import { Option, Schema } from "effect"

/**
 * A span of a session's messages and, once the summary model has written it, its summary. Level 0 (L0) segments
 * are cut from the messages themselves (topic shifts, ~15k tokens); a level n+1 segment rolls up 10 contiguous
 * summarized segments of level n and spans exactly their messages.
 *
 * Message indices are positions in the session's messages in model order (as the parser returns them and recall
 * indexes them): `start` inclusive, `end` exclusive.
 */
export class Segment extends Schema.Class<Segment>("Segment")({
  id: Schema.Number,
  sessionId: Schema.String,
  level: Schema.Number,
  start: Schema.Number,
  end: Schema.Number,
  /** Tokens of the messages it spans (for a parent: the sum over its children). */
  tokens: Schema.Number,
  /** ISO times of its first and last message. */
  firstAt: Schema.String,
  lastAt: Schema.String,
  /** null until summarized (a failed summary stays null and is retried). */
  summary: Schema.NullOr(Schema.String),
  /** Tokens of the summary; 0 while there is none. */
  summaryTokens: Schema.Number,
  /** The segment one level up that rolled this one up; null while it is a root. */
  parentId: Schema.NullOr(Schema.Number)
}) {}

/** A segment about to be stored: no id, no parent yet. */
export interface NewSegment {
  readonly level: number
  readonly start: number
  readonly end: number
  readonly tokens: number
  readonly firstAt: string
  readonly lastAt: string
  readonly summary: string | null
  readonly summaryTokens: number
}

/** Segments and summaries could not be read or written. */
export class SegmentStoreError extends Schema.TaggedError<SegmentStoreError>()("SegmentStoreError", {
  message: Schema.String
}) {}

/**
 * Where the raw window of a session starts, persisted so it survives a restart: `messageIndex` is the first message
 * sent raw; `byteOffset` is where that message's line starts in the session file and `linesBefore` how many
 * message lines come before it, so a load can start reading there; `at` is that message's time (a check that the
 * file is still the one the cut was made in).
 */
export class ContextCut extends Schema.Class<ContextCut>("ContextCut")({
  sessionId: Schema.String,
  messageIndex: Schema.Number,
  byteOffset: Schema.Number,
  linesBefore: Schema.Number,
  at: Schema.String,
  /**
   * Where the raw window starts when the fallback cut put it past the summarized messages (they could not be
   * summarized in time): the session is still read from `messageIndex`, so the summaries catch up on the messages in
   * between. Absent: the raw window starts at `messageIndex`.
   */
  rawStart: Schema.optionalWith(Schema.Number, { nullable: true })
}) {}

/** Where a session's raw window starts: its cut's `rawStart`, else the cut itself, else the first message. */
export const rawWindowStart = (cut: Option.Option<ContextCut>): number =>
  Option.match(cut, { onNone: () => 0, onSome: (c) => c.rawStart ?? c.messageIndex })

/** The summary a segment should be written to: about a tenth of its tokens, within 200–1,500. */
export const summaryTargetTokens = (tokens: number): number => Math.min(1_500, Math.max(200, Math.round(tokens / 10)))

/** Segmentation and rollup settings (seed 003). */
export const segmentation = {
  /** Segmentation runs once at least this many messages and tokens are unsegmented. */
  triggerMessages: 10,
  triggerTokens: 10_000,
  targetTokens: 15_000,
  minTokens: 5_000,
  minMessages: 10,
  /** A segment never spans more than this (twice the target). */
  maxTokens: 30_000,
  /** Children per parent in the rollup. */
  fanout: 10
} as const

/** The end of the contiguous summarized L0 prefix: the cut never passes it, so nothing falls out of both layers. */
export const coveredEnd = (segments: ReadonlyArray<Segment>): number => {
  const l0 = segments.filter((segment) => segment.level === 0).sort((a, b) => a.start - b.start)
  let end = 0
  for (const segment of l0) {
    if (segment.start !== end || segment.summary === null) break
    end = segment.end
  }
  return end
}
