import { Context, type Effect, type Option } from "effect"
import type { ContextCut, NewSegment, Segment, SegmentStoreError } from "./Segment.js"
import type { SummarizerHealth } from "./summarizerHealth.js"

/**
 * The segment tree and the raw window's cut of each session. kern.db (SQLite or PostgreSQL: its SQL is the same on both)
 * is one implementation (SegmentStoreSql.ts); the SQL stays there.
 */
export interface SegmentStoreShape {
  /** A session's segments, every level, ordered by level then start. */
  readonly list: (sessionId: string) => Effect.Effect<ReadonlyArray<Segment>, SegmentStoreError>
  /** Stores new segments of one level in one transaction; answers them with their ids, in order. */
  readonly insert: (sessionId: string, segments: ReadonlyArray<NewSegment>) => Effect.Effect<ReadonlyArray<Segment>, SegmentStoreError>
  /** Stores a parent over `childIds` (which must be roots of one level below) and points them at it, in one transaction. */
  readonly insertParent: (
    sessionId: string,
    parent: NewSegment,
    childIds: ReadonlyArray<number>
  ) => Effect.Effect<Segment, SegmentStoreError>
  /** Sets a segment's summary. */
  readonly setSummary: (id: number, summary: string, summaryTokens: number) => Effect.Effect<void, SegmentStoreError>
  /** Forgets a session's segments and cut (`kern segments rebuild`). */
  readonly clear: (sessionId: string) => Effect.Effect<void, SegmentStoreError>
  readonly getCut: (sessionId: string) => Effect.Effect<Option.Option<ContextCut>, SegmentStoreError>
  readonly setCut: (cut: ContextCut) => Effect.Effect<void, SegmentStoreError>
  /** The per-model token correction (provider's count / ours), learnt from reported input tokens. */
  readonly getCalibration: (model: string) => Effect.Effect<Option.Option<number>, SegmentStoreError>
  readonly setCalibration: (model: string, ratio: number) => Effect.Effect<void, SegmentStoreError>
  /** The summary model's health as last stored; none before its first summary. */
  readonly getHealth: Effect.Effect<Option.Option<SummarizerHealth>, SegmentStoreError>
  readonly setHealth: (health: SummarizerHealth) => Effect.Effect<void, SegmentStoreError>
}

export class SegmentStore extends Context.Tag("kern/context/SegmentStore")<SegmentStore, SegmentStoreShape>() {}
