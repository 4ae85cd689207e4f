import { Context, type Effect, type Option, Schema } from "effect"
import type { RecallSource } from "./schema.js"

/** The recall index could not be read or written. */
export class RecallStoreError extends Schema.TaggedError<RecallStoreError>()("RecallStoreError", {
  message: Schema.String
}) {}

/** One session message as indexed: full text (load mode returns it whole). */
export interface IndexedMessage {
  readonly index: number
  readonly role: string
  readonly atMs: number
  /** Tool calls the message made (an assistant's turn is complete when it answers without any). */
  readonly toolCalls: number
  readonly text: string
}

/** How far a session file has been read: byte offset past the last whole line, and the file it was. */
export interface SessionState {
  readonly sessionId: string
  readonly dev: string
  readonly ino: string
  readonly offset: number
  /** Messages indexed (the next one's index). */
  readonly messages: number
  /** Messages already in chunks (the first of the unfinished turn). */
  readonly chunked: number
}

export interface NewChunk {
  readonly source: RecallSource
  readonly sessionId: string | null
  readonly path: string | null
  readonly messageStart: number
  readonly messageEnd: number
  readonly startMs: number
  readonly endMs: number
  readonly text: string
}

export interface ChunkRow extends NewChunk {
  readonly id: number
}

export interface ChunkVector {
  readonly id: number
  readonly vector: Float32Array
  readonly startMs: number
  readonly endMs: number
}

/** A time window, milliseconds since the epoch, both ends inclusive. */
export interface TimeWindow {
  readonly afterMs: number | undefined
  readonly beforeMs: number | undefined
}

/**
 * Only chunks of these sessions (no file chunks): a conversation that is not the operator's searches its own. Applied
 * inside the query, before the limit, so the best of these sessions are found however many better hits lie elsewhere.
 * Undefined: every chunk.
 */
export type SessionFilter = ReadonlyArray<string> | undefined

export interface Ranked {
  readonly id: number
  /** Vector: cosine distance; keyword: bm25 (lower is better for both). */
  readonly score: number
}

export interface StoreCounts {
  readonly messages: number
  readonly chunks: number
  readonly unembedded: number
  readonly sessions: number
  readonly files: number
  readonly fromMs: number | null
  readonly toMs: number | null
}

/** The embedding the stored vectors were made with. */
export interface VectorSpace {
  readonly model: string
  readonly dimension: number
}

/**
 * The database cannot hold vectors (PostgreSQL without the pgvector extension): recall searches by keywords only.
 * Said once when the store is built, and shown by `kern doctor` and the recall stats (as the keyword-only reason).
 */
export class VectorsUnavailable extends Schema.TaggedClass<VectorsUnavailable>()("VectorsUnavailable", {
  reason: Schema.String
}) {}

type E<A> = Effect.Effect<A, RecallStoreError>

/**
 * The recall index's tables. The SQLite layer (RecallStoreSqlite) is one implementation: FTS5, vec0 and the
 * binary-prefilter query live there only, so another database is a layer swap.
 */
export interface RecallStoreShape {
  /** Set when this database keeps no vectors: nothing is embedded, search is by keywords. */
  readonly vectorsUnavailable: Option.Option<VectorsUnavailable>
  readonly sessionStates: E<ReadonlyArray<SessionState>>
  /** Forgets everything indexed from a session (it was rewritten, truncated or deleted). */
  readonly resetSession: (sessionId: string) => E<void>
  /**
   * The session's file is another file on disk with the same lines (a restored backup's): what was indexed of it is
   * kept, under the file's new device and inode, instead of read again.
   */
  readonly relocateSession: (sessionId: string, dev: string, ino: string) => E<void>
  /** Stores newly read messages and the new reading state, together. */
  readonly appendMessages: (state: SessionState, messages: ReadonlyArray<IndexedMessage>) => E<void>
  readonly messagesIn: (sessionId: string, start: number, end: number) => E<ReadonlyArray<IndexedMessage>>
  /** Stores a session's finished turns as chunks and moves its `chunked` mark, together. */
  readonly addSessionChunks: (sessionId: string, chunked: number, chunks: ReadonlyArray<NewChunk>) => E<void>
  readonly fileHashes: E<ReadonlyMap<string, string>>
  /** Replaces a file's chunks (hash undefined: the file is gone). */
  readonly replaceFile: (path: string, hash: string | undefined, chunks: ReadonlyArray<NewChunk>) => E<void>
  /** Chunks without a vector, oldest first (or newest first: a one-shot chat embeds its own turn, not the backlog). */
  readonly unembedded: (limit: number, newestFirst?: boolean) => E<ReadonlyArray<ChunkRow>>
  readonly vectorSpace: E<Option.Option<VectorSpace>>
  /** Drops every vector and records the new space: the chunks are embedded again from their stored text. */
  readonly resetVectors: (space: VectorSpace) => E<void>
  readonly putVectors: (dimension: number, vectors: ReadonlyArray<ChunkVector>) => E<void>
  /**
   * Nearest chunks: binary-quantized prefilter of `candidates`, rescored by the cosine distance of the float query
   * to each candidate's stored (int8) vector. With `sessions`, every vector of those sessions is scored (a
   * conversation's own chunks are few; a prefilter over all of them would be taken up by other conversations').
   */
  readonly vectorSearch: (
    query: Float32Array,
    candidates: number,
    window: TimeWindow,
    sessions?: SessionFilter
  ) => E<ReadonlyArray<Ranked>>
  /** Every stored vector scored, no prefilter (the benchmark's baseline). */
  readonly scanVectorSearch: (query: Float32Array, limit: number) => E<ReadonlyArray<Ranked>>
  /** BM25 over chunk text for the words of `query`, any of them. */
  readonly keywordSearch: (query: string, limit: number, window: TimeWindow, sessions?: SessionFilter) => E<ReadonlyArray<Ranked>>
  readonly chunks: (ids: ReadonlyArray<number>) => E<ReadonlyArray<ChunkRow>>
  readonly counts: E<StoreCounts>
  /** A small persisted note (what another process should know: a backfill running, why vectors are off). */
  readonly note: (key: NoteKey) => E<Option.Option<string>>
  readonly setNote: (key: NoteKey, value: string | undefined) => E<void>
}

/**
 * `backfill`: a runtime's start-up pass runs; `keyword_reason`: why vectors are off; `rebuild`: a reindex started
 * and has not finished (the index is partial until one does).
 */
export type NoteKey = "backfill" | "keyword_reason" | "rebuild"

export class RecallStore extends Context.Tag("kern/recall/RecallStore")<RecallStore, RecallStoreShape>() {}
