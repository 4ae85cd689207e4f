import { Schema } from "effect"

/** Where a hit comes from: a conversation, or a knowledge/ or notes/ file. */
export const RecallSource = Schema.Literal("session", "file")
export type RecallSource = typeof RecallSource.Type

/** Messages already in the model's context, by session and inclusive message range: never returned as hits. */
export const RecallExclude = Schema.Struct({
  sessionId: Schema.String,
  messageStart: Schema.Int,
  messageEnd: Schema.Int
})
export type RecallExclude = typeof RecallExclude.Type

/** An ISO date or date-time (`2026-03-01`, `2026-03-01T08:00:00Z`), as a bound on a hit's time. */
export const RecallDate = Schema.String.pipe(
  Schema.filter((text) => !Number.isNaN(Date.parse(text)), { message: () => "an ISO date such as 2026-03-01" })
).annotations({ identifier: "an ISO date (YYYY-MM-DD or a date-time)" })

export const SearchRequest = Schema.Struct({
  query: Schema.String,
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 50))),
  /** Only hits that end at or after this time. */
  after: Schema.optional(RecallDate),
  /** Only hits that start at or before this time. */
  before: Schema.optional(RecallDate),
  exclude: Schema.optional(Schema.Array(RecallExclude))
})
export type SearchRequest = typeof SearchRequest.Type

export class RecallHit extends Schema.Class<RecallHit>("RecallHit")({
  source: RecallSource,
  /** The session of a conversation hit; null for a file. */
  sessionId: Schema.NullOr(Schema.String),
  /** The file of a file hit (relative to the agent folder); null for a conversation. */
  path: Schema.NullOr(Schema.String),
  /** Inclusive message range in the session (for a file: its paragraph range). */
  messageStart: Schema.Int,
  messageEnd: Schema.Int,
  startedAt: Schema.String,
  endedAt: Schema.String,
  /** Cosine distance to the query (0 = same direction); null when the hit came from keywords only. */
  distance: Schema.NullOr(Schema.Number),
  /** Reciprocal-rank-fusion score: higher is better. */
  score: Schema.Number,
  text: Schema.String
}) {}

export const RecallMode = Schema.Literal("hybrid", "keyword")
export type RecallMode = typeof RecallMode.Type

export class SearchResult extends Schema.Class<SearchResult>("SearchResult")({
  query: Schema.String,
  /** hybrid: vectors and keywords fused; keyword: FTS5 only (embeddings off or unavailable). */
  mode: RecallMode,
  hits: Schema.Array(RecallHit)
}) {}

export const LoadRequest = Schema.Struct({
  sessionId: Schema.String,
  messageStart: Schema.Int.pipe(Schema.nonNegative()),
  messageEnd: Schema.Int.pipe(Schema.nonNegative()),
  maxChars: Schema.optional(Schema.Int.pipe(Schema.positive()))
})
export type LoadRequest = typeof LoadRequest.Type

export class RecallMessage extends Schema.Class<RecallMessage>("RecallMessage")({
  index: Schema.Int,
  role: Schema.String,
  at: Schema.String,
  text: Schema.String
}) {}

export class LoadResult extends Schema.Class<LoadResult>("LoadResult")({
  sessionId: Schema.String,
  messages: Schema.Array(RecallMessage),
  /** Where the next page starts when the range did not fit in `maxChars`; null when the range is complete. */
  nextMessageStart: Schema.NullOr(Schema.Int)
}) {}

export class EmbeddingStatus extends Schema.Class<EmbeddingStatus>("EmbeddingStatus")({
  /** vectors: hybrid search; keyword: FTS5 only, `reason` says why. */
  mode: Schema.Literal("vectors", "keyword"),
  model: Schema.NullOr(Schema.String),
  dimension: Schema.NullOr(Schema.Int),
  reason: Schema.NullOr(Schema.String)
}) {}

export class RecallStats extends Schema.Class<RecallStats>("RecallStats")({
  messages: Schema.Int,
  chunks: Schema.Int,
  /** Chunks that still wait for a vector. */
  unembedded: Schema.Int,
  sessions: Schema.Int,
  files: Schema.Int,
  /** Earliest and latest indexed message time (ISO); null when nothing is indexed. */
  from: Schema.NullOr(Schema.String),
  to: Schema.NullOr(Schema.String),
  backfillRunning: Schema.Boolean,
  embedding: EmbeddingStatus
}) {}
