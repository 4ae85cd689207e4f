import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option } from "effect"
import { transaction } from "../../storage/transaction.js"
import {
  type ChunkVector,
  type IndexedMessage,
  type NewChunk,
  type Ranked,
  RecallStore,
  RecallStoreError,
  type SessionFilter,
  type SessionState,
  type StoreCounts,
  type TimeWindow,
  type VectorSpace,
  VectorsUnavailable
} from "../RecallStore.js"
import { keywordQueryWords } from "./keywords.js"
import { cosineDistanceTo, hnswPlan, type VectorPlan, vectorLiteral } from "./vectors.js"
import { ChunkRowSchema, CountRowSchema, decoded, MessageRow, RankedRow, SessionStateRow } from "../storeRows.js"

// PostgreSQL's own parts of recall: keywords on a generated tsvector (GIN), vectors on pgvector (HNSW). The SQLite
// store (FTS5, sqlite-vec) is RecallStoreSqlite; both implement RecallStore and are chosen by the client's dialect
// (src/recall/storeForClient.ts).

const batchRows = 400
const vectorRows = 100

const failed = (what: string) => (error: SqlError | { readonly message: string }) =>
  new RecallStoreError({ message: `could not ${what} the recall index in PostgreSQL: ${error.message}` })

/**
 * PostgreSQL's text cannot hold NUL (a tool's output may): it is stored as U+FFFD, the rest of the text as it was.
 * Nothing else is changed (a lone surrogate is written as U+FFFD by the UTF-8 encoder already).
 */
export const storableText = (text: string): string => text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text

const chunkColumns = (chunk: NewChunk) => ({
  source: chunk.source,
  sessionId: chunk.sessionId === null ? null : storableText(chunk.sessionId),
  path: chunk.path === null ? null : storableText(chunk.path),
  messageStart: chunk.messageStart,
  messageEnd: chunk.messageEnd,
  startMs: Math.trunc(chunk.startMs),
  endMs: Math.trunc(chunk.endMs),
  text: storableText(chunk.text)
})

/** Whether the server has pgvector installed in this database, and its version ("0.8.1"). */
const vectorExtension = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ readonly version: string }>`SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'`,
    (rows) => Option.fromNullable(rows[0]?.version)
  )

export const noVectorsReason =
  "the PostgreSQL server has no pgvector extension (`vector`): recall searches by keywords only (install pgvector and run CREATE EXTENSION vector, then restart the agent)"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const extension = yield* vectorExtension(sql).pipe(Effect.orElseSucceed(() => Option.none<string>()))
  const vectorsUnavailable = Option.isNone(extension)
    ? Option.some(new VectorsUnavailable({ reason: noVectorsReason }))
    : Option.none()
  // In the agent's log once; `kern status` and `kern doctor` say it to the user (a warning would also print on every
  // foreground command's stderr, `kern status` included).
  if (Option.isSome(vectorsUnavailable)) yield* Effect.logInfo(`kern: ${vectorsUnavailable.value.reason}`)
  const iterativeScan = Option.match(extension, { onNone: () => false, onSome: supportsIterativeScan })

  const hasVectorTable = Effect.map(
    sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_class
      WHERE relname = 'recall_vectors' AND relnamespace = current_schema()::regnamespace`,
    (rows) => (rows[0]?.n ?? 0) > 0
  )

  /** The plan of the stored vectors' space (column type, distance, index), from the recorded dimension. */
  const planOf = Effect.map(
    sql<{ readonly value: string }>`SELECT value FROM recall_meta WHERE key = 'embedding_dimension'`,
    (rows) => {
      const dimension = Number(rows[0]?.value)
      return Number.isInteger(dimension) && dimension > 0 ? Option.some(hnswPlan(dimension)) : Option.none<VectorPlan>()
    }
  )

  const deleteChunks = (where: ReturnType<typeof sql.and>) =>
    // The vectors go with their chunks (ON DELETE CASCADE), the keywords are a column of the chunk.
    sql`DELETE FROM recall_chunks WHERE ${where}`

  const insertChunks = (chunks: ReadonlyArray<NewChunk>) =>
    Effect.gen(function*() {
      for (let i = 0; i < chunks.length; i += batchRows) {
        yield* sql`INSERT INTO recall_chunks ${sql.insert(chunks.slice(i, i + batchRows).map(chunkColumns))}`
      }
    })

  const sessionStates = sql`SELECT session_id, dev, ino, "offset", messages, chunked FROM recall_sessions`.pipe(
    decoded(SessionStateRow),
    Effect.mapError(failed("read")),
    Effect.withSpan("kern.recall.store.sessionStates")
  )

  const resetSession = (sessionId: string) =>
    Effect.gen(function*() {
      yield* deleteChunks(sql.and([sql`session_id = ${sessionId}`]))
      yield* sql`DELETE FROM recall_messages WHERE session_id = ${sessionId}`
      yield* sql`DELETE FROM recall_sessions WHERE session_id = ${sessionId}`
    }).pipe(transaction(sql), Effect.mapError(failed("reset a session in")), Effect.withSpan("kern.recall.store.resetSession"))

  const relocateSession = (sessionId: string, dev: string, ino: string) =>
    sql`UPDATE recall_sessions SET dev = ${dev}, ino = ${ino} WHERE session_id = ${sessionId}`.pipe(
      Effect.asVoid,
      Effect.mapError(failed("write")),
      Effect.withSpan("kern.recall.store.relocateSession")
    )

  const appendMessages = (state: SessionState, messages: ReadonlyArray<IndexedMessage>) =>
    Effect.gen(function*() {
      for (let i = 0; i < messages.length; i += batchRows) {
        const rows = messages.slice(i, i + batchRows).map((m) => ({
          sessionId: state.sessionId,
          idx: m.index,
          role: storableText(m.role),
          atMs: Math.trunc(m.atMs),
          toolCalls: m.toolCalls,
          text: storableText(m.text)
        }))
        yield* sql`INSERT INTO recall_messages ${sql.insert(rows)}
          ON CONFLICT (session_id, idx) DO UPDATE SET role = excluded.role, at_ms = excluded.at_ms,
          tool_calls = excluded.tool_calls, text = excluded.text`
      }
      yield* sql`INSERT INTO recall_sessions ${sql.insert({ ...state })}
        ON CONFLICT (session_id) DO UPDATE SET dev = excluded.dev, ino = excluded.ino, "offset" = excluded."offset",
        messages = excluded.messages, chunked = excluded.chunked`
    }).pipe(transaction(sql), Effect.mapError(failed("write")), Effect.withSpan("kern.recall.store.appendMessages"))

  const messagesIn = (sessionId: string, start: number, end: number) =>
    sql`SELECT idx, role, at_ms, tool_calls, text FROM recall_messages
      WHERE session_id = ${sessionId} AND idx BETWEEN ${start} AND ${end} ORDER BY idx`.pipe(
      decoded(MessageRow),
      Effect.map((list) =>
        list.map((row): IndexedMessage => ({ index: row.idx, role: row.role, atMs: row.atMs, toolCalls: row.toolCalls, text: row.text }))
      ),
      Effect.mapError(failed("read")),
      Effect.withSpan("kern.recall.store.messagesIn")
    )

  const addSessionChunks = (sessionId: string, chunked: number, chunks: ReadonlyArray<NewChunk>) =>
    Effect.zipRight(
      insertChunks(chunks),
      sql`UPDATE recall_sessions SET chunked = ${chunked} WHERE session_id = ${sessionId}`
    ).pipe(transaction(sql), Effect.asVoid, Effect.mapError(failed("write")), Effect.withSpan("kern.recall.store.addChunks"))

  const fileHashes = sql<{ readonly path: string; readonly hash: string }>`SELECT path, hash FROM recall_files`.pipe(
    Effect.map((rows) => new Map(rows.map((row) => [row.path, row.hash]))),
    Effect.mapError(failed("read"))
  )

  const replaceFile = (path: string, hash: string | undefined, chunks: ReadonlyArray<NewChunk>) =>
    Effect.gen(function*() {
      yield* deleteChunks(sql.and([sql`source = 'file'`, sql`path = ${storableText(path)}`]))
      if (hash === undefined) {
        yield* sql`DELETE FROM recall_files WHERE path = ${storableText(path)}`
        return
      }
      yield* insertChunks(chunks)
      yield* sql`INSERT INTO recall_files (path, hash) VALUES (${storableText(path)}, ${hash})
        ON CONFLICT (path) DO UPDATE SET hash = excluded.hash`
    }).pipe(transaction(sql), Effect.mapError(failed("write")), Effect.withSpan("kern.recall.store.replaceFile"))

  const chunkSelect = sql.literal(
    "id, source, session_id, path, message_start, message_end, start_ms, end_ms, text"
  )

  const unembedded = (limit: number, newestFirst = false) =>
    (newestFirst
      ? sql`SELECT ${chunkSelect} FROM recall_chunks WHERE embedded = 0 ORDER BY id DESC LIMIT ${limit}`
      : sql`SELECT ${chunkSelect} FROM recall_chunks WHERE embedded = 0 ORDER BY id LIMIT ${limit}`).pipe(
      decoded(ChunkRowSchema),
      Effect.mapError(failed("read"))
    )

  const vectorSpace = sql<{ readonly key: string; readonly value: string }>`SELECT key, value FROM recall_meta
    WHERE key IN ('embedding_model', 'embedding_dimension')`.pipe(
    Effect.map((rows): Option.Option<VectorSpace> => {
      const model = rows.find((row) => row.key === "embedding_model")?.value
      const dimension = Number(rows.find((row) => row.key === "embedding_dimension")?.value)
      return model === undefined || !Number.isInteger(dimension) ? Option.none() : Option.some({ model, dimension })
    }),
    Effect.mapError(failed("read"))
  )

  const setMeta = (key: string, value: string) =>
    sql`INSERT INTO recall_meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`

  /**
   * Records the new space and makes the vectors' table for it: a `vector(n)` column (the dimension is part of the
   * type, so the table is made again for another) and its HNSW index (plan in vectors.ts). Without pgvector only the
   * space is recorded.
   */
  const resetVectors = (space: VectorSpace) =>
    Effect.gen(function*() {
      const dimension = Math.trunc(space.dimension)
      yield* sql`DROP TABLE IF EXISTS recall_vectors`
      yield* sql`UPDATE recall_chunks SET embedded = 0 WHERE embedded = 1`
      yield* setMeta("embedding_model", space.model)
      yield* setMeta("embedding_dimension", String(dimension))
      if (Option.isSome(vectorsUnavailable) || dimension <= 0) return
      const plan = hnswPlan(dimension)
      // The dimension is part of the type and the index's expression, so SQL text: an integer, truncated above.
      yield* sql.unsafe(`CREATE TABLE recall_vectors (
        chunk_id bigint PRIMARY KEY NOT NULL REFERENCES recall_chunks (id) ON DELETE CASCADE,
        embedding vector(${dimension}) NOT NULL,
        start_ms bigint NOT NULL,
        end_ms bigint NOT NULL
      )`)
      if (plan.index !== undefined) yield* sql.unsafe(plan.index)
    }).pipe(transaction(sql), Effect.mapError(failed("reset the vectors of")), Effect.withSpan("kern.recall.store.resetVectors"))

  const putVectors = (dimension: number, vectors: ReadonlyArray<ChunkVector>) =>
    Effect.gen(function*() {
      if (Option.isSome(vectorsUnavailable)) {
        return yield* new RecallStoreError({ message: vectorsUnavailable.value.reason })
      }
      for (let i = 0; i < vectors.length; i += vectorRows) {
        const part = vectors.slice(i, i + vectorRows)
        yield* sql`INSERT INTO recall_vectors (chunk_id, embedding, start_ms, end_ms) VALUES ${sql.csv(part.map((v) =>
          sql`(${v.id}, ${vectorLiteral(v.vector, dimension)}::vector, ${Math.trunc(v.startMs)}, ${Math.trunc(v.endMs)})`
        ))} ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding, start_ms = excluded.start_ms,
          end_ms = excluded.end_ms`
        yield* sql`UPDATE recall_chunks SET embedded = 1 WHERE id IN ${sql.in(part.map((v) => v.id))}`
      }
    }).pipe(transaction(sql), Effect.mapError(failed("write vectors to")), Effect.withSpan("kern.recall.store.putVectors"))

  const windowOf = (window: TimeWindow, start: string, end: string) =>
    sql.and([
      ...(window.afterMs === undefined ? [] : [sql`${sql.literal(end)} >= ${Math.trunc(window.afterMs)}`]),
      ...(window.beforeMs === undefined ? [] : [sql`${sql.literal(start)} <= ${Math.trunc(window.beforeMs)}`])
    ])

  const nearestFirst = (rows: ReadonlyArray<Ranked>) => [...rows].sort((a, b) => a.score - b.score || a.id - b.id)

  /**
   * Nearest chunks by cosine distance. Over every chunk, the HNSW index answers (ef_search at least the candidates
   * asked for; with pgvector 0.8's iterative scan a time window filters inside the walk instead of after it). With
   * `sessions`, every vector of those sessions is scored exactly (the subquery fence keeps the planner off the index:
   * a filtered walk of the whole graph would be taken up by other conversations' chunks).
   */
  const vectorSearch = (query: Float32Array, candidates: number, window: TimeWindow, sessions?: SessionFilter) =>
    Effect.gen(function*() {
      if (Option.isSome(vectorsUnavailable) || sessions?.length === 0) return []
      const plan = yield* planOf
      if (Option.isNone(plan) || !(yield* hasVectorTable)) return []
      const distance = cosineDistanceTo(sql, plan.value, "v.embedding", query)
      if (sessions !== undefined) {
        return yield* decoded(RankedRow)(sql`SELECT id, score FROM (
            SELECT v.chunk_id AS id, ${distance} AS score
            FROM recall_vectors v JOIN recall_chunks c ON c.id = v.chunk_id
            WHERE c.session_id IN ${sql.in(sessions)} AND ${windowOf(window, "v.start_ms", "v.end_ms")} OFFSET 0
          ) scored ORDER BY score, id LIMIT ${candidates}`)
      }
      const rows = yield* Effect.gen(function*() {
        if (plan.value.index !== undefined) {
          yield* sql.unsafe(`SET LOCAL hnsw.ef_search = ${Math.min(1_000, Math.max(40, Math.trunc(candidates)))}`)
          if (iterativeScan) yield* sql.unsafe(`SET LOCAL hnsw.iterative_scan = relaxed_order`)
        }
        return yield* decoded(RankedRow)(sql`SELECT v.chunk_id AS id, ${distance} AS score
          FROM recall_vectors v WHERE ${windowOf(window, "v.start_ms", "v.end_ms")}
          ORDER BY score LIMIT ${candidates}`)
      }).pipe(transaction(sql))
      // relaxed_order may hand back a few out of order: sorted here.
      return nearestFirst(rows)
    }).pipe(Effect.mapError(failed("search")), Effect.withSpan("kern.recall.store.vectorSearch"))

  /** Every stored vector scored exactly (no index: the subquery fence): the benchmark's baseline. */
  const scanVectorSearch = (query: Float32Array, limit: number) =>
    Effect.gen(function*() {
      if (Option.isSome(vectorsUnavailable)) return []
      const plan = yield* planOf
      if (Option.isNone(plan) || !(yield* hasVectorTable)) return []
      const distance = cosineDistanceTo(sql, plan.value, "v.embedding", query)
      return yield* decoded(RankedRow)(sql`SELECT id, score FROM (
          SELECT v.chunk_id AS id, ${distance} AS score FROM recall_vectors v OFFSET 0
        ) scored ORDER BY score, id LIMIT ${limit}`)
    }).pipe(Effect.mapError(failed("search")), Effect.withSpan("kern.recall.store.scanVectorSearch"))

  /**
   * Chunks matching any word of `query`, best first. The words are taken out of the text in JavaScript (letters,
   * digits, `_`) and each is bound as a parameter of its own `plainto_tsquery`, OR-ed with `||`: no character the user
   * typed is ever tsquery or SQL syntax. Ranked by `ts_rank` (term frequency, length-normalized), negated so lower is
   * better as BM25 is on SQLite; ties by id, so the order fusion ranks is the same each time.
   */
  const keywordSearch = (query: string, limit: number, window: TimeWindow, sessions?: SessionFilter) => {
    const words = keywordQueryWords(query)
    if (words.length === 0 || sessions?.length === 0) return Effect.succeed([])
    const tsquery = sql.join(" || ", false)(words.map((word) => sql`plainto_tsquery('kern_recall', ${word})`))
    const only = sessions === undefined ? sql.and([]) : sql`c.session_id IN ${sql.in(sessions)}`
    return sql`WITH q AS (SELECT (${tsquery}) AS query)
      SELECT c.id, -ts_rank(c.keywords, q.query, 1) AS score FROM recall_chunks c, q
      WHERE c.keywords @@ q.query AND ${windowOf(window, "c.start_ms", "c.end_ms")} AND ${only}
      ORDER BY score, c.id LIMIT ${limit}`.pipe(
      decoded(RankedRow),
      Effect.mapError(failed("search")),
      Effect.withSpan("kern.recall.store.keywordSearch")
    )
  }

  const chunks = (ids: ReadonlyArray<number>) =>
    ids.length === 0
      ? Effect.succeed([])
      : sql`SELECT ${chunkSelect} FROM recall_chunks WHERE id IN ${sql.in(ids)}`.pipe(
        decoded(ChunkRowSchema),
        Effect.mapError(failed("read"))
      )

  const counts = sql`SELECT
      (SELECT count(*)::int FROM recall_messages) AS messages,
      (SELECT count(*)::int FROM recall_chunks) AS chunks,
      (SELECT count(*)::int FROM recall_chunks WHERE embedded = 0) AS unembedded,
      (SELECT count(*)::int FROM recall_sessions) AS sessions,
      (SELECT count(*)::int FROM recall_files) AS files,
      (SELECT min(at_ms)::float8 FROM recall_messages) AS from_ms,
      (SELECT max(at_ms)::float8 FROM recall_messages) AS to_ms`.pipe(
    decoded(CountRowSchema),
    Effect.map((rows): StoreCounts => rows[0] ?? { messages: 0, chunks: 0, unembedded: 0, sessions: 0, files: 0, fromMs: null, toMs: null }),
    Effect.mapError(failed("read")),
    Effect.withSpan("kern.recall.store.counts")
  )

  const note = (key: string) =>
    sql<{ readonly value: string }>`SELECT value FROM recall_meta WHERE key = ${`note_${key}`}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]?.value)),
      Effect.mapError(failed("read"))
    )

  const setNote = (key: string, value: string | undefined) =>
    (value === undefined
      ? sql`DELETE FROM recall_meta WHERE key = ${`note_${key}`}`
      : setMeta(`note_${key}`, storableText(value))).pipe(Effect.asVoid, Effect.mapError(failed("write")))

  return RecallStore.of({
    vectorsUnavailable,
    note,
    setNote,
    sessionStates,
    resetSession,
    relocateSession,
    appendMessages,
    messagesIn,
    addSessionChunks,
    fileHashes,
    replaceFile,
    unembedded,
    vectorSpace,
    resetVectors,
    putVectors,
    vectorSearch,
    scanVectorSearch,
    keywordSearch,
    chunks,
    counts
  })
})

/** pgvector 0.8 and later walk the HNSW graph on until enough rows pass a filter (`hnsw.iterative_scan`). */
const supportsIterativeScan = (version: string): boolean => {
  const [major = 0, minor = 0] = version.split(".").map(Number)
  return major > 0 || minor >= 8
}

/** The recall index in PostgreSQL (tsvector keywords, pgvector vectors when the server has the extension). */
export const layer: Layer.Layer<RecallStore, never, SqlClient.SqlClient> = Layer.effect(RecallStore, make)
