import { transaction } from "../storage/transaction.js"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option, Schema } from "effect"
import {
  type ChunkVector,
  type IndexedMessage,
  type NewChunk,
  RecallStore,
  RecallStoreError,
  type SessionFilter,
  type SessionState,
  type StoreCounts,
  type TimeWindow,
  type VectorSpace
} from "./RecallStore.js"
import { bytesOf, cosineDistance, int8FromBytes, norm, quantize } from "../storage/int8Vector.js"
import { loadVectorExtension } from "../storage/vectorExtension.js"
import {
  chunkRowCheck,
  ChunkRowSchema,
  CountRowSchema,
  decoded,
  decodedChecked,
  isNumber,
  isPlainRow,
  MessageRow,
  RankedRow,
  rankedRowCheck,
  type RowCheck,
  SessionStateRow
} from "./storeRows.js"

// SQLite's own parts of recall (FTS5, vec0, the binary prefilter) stay in this module. Vectors are stored as int8
// with a scale each (src/storage/int8Vector.ts, migration 0860).

const batchRows = 400
/** Vectors a statement (each binds a few KB). */
const vectorRows = 100

const failed = (what: string) => (error: SqlError | { readonly message: string }) =>
  new RecallStoreError({ message: `could not ${what} the recall index in kern.db: ${error.message}` })

/** A Float32Array as the bytes sqlite-vec reads (the SQL layer binds Uint8Array as a blob). */
export const vectorBlob = (vector: Float32Array): Uint8Array => new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)

/** The words of a query as an FTS5 expression matching any of them; quoted, so no word is read as syntax. */
export const ftsQuery = (text: string): string | undefined => {
  const words = [...new Set((text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []))].slice(0, 64)
  return words.length === 0 ? undefined : words.map((word) => `"${word}"`).join(" OR ")
}

const CandidateRow = Schema.Struct({ id: Schema.Number, embedding: Schema.Uint8ArrayFromSelf })
const candidateRowCheck: RowCheck<typeof CandidateRow.Type> = (row) => {
  if (!isPlainRow(row)) return undefined
  const { embedding, id } = row
  return isNumber(id) && embedding instanceof Uint8Array ? { id, embedding } : undefined
}
const candidateRows = decodedChecked(CandidateRow, candidateRowCheck)
const rankedRows = decodedChecked(RankedRow, rankedRowCheck)
const chunkRows = decodedChecked(ChunkRowSchema, chunkRowCheck)

const chunkColumns = (chunk: NewChunk) => ({
  source: chunk.source,
  sessionId: chunk.sessionId,
  path: chunk.path,
  messageStart: chunk.messageStart,
  messageEnd: chunk.messageEnd,
  startMs: chunk.startMs,
  endMs: chunk.endMs,
  text: chunk.text
})


export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /**
   * sqlite-vec, loaded into the connection by the first operation that reads or writes vectors (vectorExtension.ts),
   * before its transaction. Kept as it went: a library that cannot load fails every vector operation alike.
   */
  const client = yield* Effect.serviceOption(SqliteClient.SqliteClient)
  const vectorExtension = yield* Effect.cached(Option.match(client, { onNone: () => Effect.void, onSome: loadVectorExtension }))

  const chunksFor = (where: ReturnType<typeof sql.and>) =>
    sql<{ readonly id: number; readonly text: string }>`SELECT id, text FROM recall_chunks WHERE ${where}`

  /** Removes chunks with their FTS rows and vectors (the vec0 table has no foreign keys). */
  const deleteChunks = (where: ReturnType<typeof sql.and>) =>
    Effect.gen(function*() {
      const doomed = yield* chunksFor(where)
      if (doomed.length === 0) return
      const ids = doomed.map((row) => row.id)
      for (let i = 0; i < ids.length; i += batchRows) {
        const part = ids.slice(i, i + batchRows)
        yield* sql`DELETE FROM recall_fts WHERE rowid IN ${sql.in(part)}`
        if (yield* hasVecTable) yield* sql`DELETE FROM recall_vec WHERE chunk_id IN ${sql.in(part)}`
        yield* sql`DELETE FROM recall_chunks WHERE id IN ${sql.in(part)}`
      }
    })

  const hasVecTable = Effect.map(
    sql<{ readonly n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE name = 'recall_vec'`,
    (rows) => (rows[0]?.n ?? 0) > 0
  )

  /** `effect` (a transaction, or a statement using `vec_` functions) after sqlite-vec is loaded. */
  const withVectors = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.zipRight(vectorExtension, effect)

  /** `effect` (a transaction that may delete chunks) after sqlite-vec is loaded, when the vec0 table is there. */
  const withVectorsIfTable = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(hasVecTable, (has) => (has ? withVectors(effect) : effect))

  /**
   * Chunks and their FTS rows, `batchRows` chunks a statement. The FTS rows are written from the texts in hand, not
   * read back from the chunks just written: one INSERT numbers its rows in the order of its VALUES, each one past the
   * table's largest id, so the ids in ascending order are the rows' (RETURNING's own order is not promised).
   */
  const insertChunks = (chunks: ReadonlyArray<NewChunk>) =>
    Effect.gen(function*() {
      for (let i = 0; i < chunks.length; i += batchRows) {
        const part = chunks.slice(i, i + batchRows)
        const inserted = yield* sql<{ readonly id: number }>`INSERT INTO recall_chunks
          ${sql.insert(part.map(chunkColumns))} RETURNING id`
        const ids = inserted.map((row) => row.id).sort((a, b) => a - b)
        yield* sql`INSERT INTO recall_fts ${sql.insert(ids.map((id, k) => ({ rowid: id, text: part[k]!.text })))}`
      }
    })

  const sessionStates: Effect.Effect<ReadonlyArray<SessionState>, RecallStoreError> = sql`SELECT * FROM recall_sessions`.pipe(
    decoded(SessionStateRow),
    Effect.mapError(failed("read")),
    Effect.withSpan("kern.recall.store.sessionStates")
  )

  const resetSession = (sessionId: string) =>
    Effect.gen(function*() {
      yield* deleteChunks(sql.and([sql`session_id = ${sessionId}`]))
      yield* sql`DELETE FROM recall_messages WHERE session_id = ${sessionId}`
      yield* sql`DELETE FROM recall_sessions WHERE session_id = ${sessionId}`
    }).pipe(
      transaction(sql),
      withVectorsIfTable,
      Effect.mapError(failed("reset a session in")),
      Effect.withSpan("kern.recall.store.resetSession")
    )

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
          role: m.role,
          atMs: m.atMs,
          toolCalls: m.toolCalls,
          text: m.text
        }))
        yield* sql`INSERT OR REPLACE INTO recall_messages ${sql.insert(rows)}`
      }
      yield* sql`INSERT INTO recall_sessions ${sql.insert({ ...state })}
        ON CONFLICT (session_id) DO UPDATE SET dev = excluded.dev, ino = excluded.ino, offset = excluded.offset,
        messages = excluded.messages, chunked = excluded.chunked`
    }).pipe(transaction(sql), Effect.mapError(failed("write")), Effect.withSpan("kern.recall.store.appendMessages"))

  const messageRows = (rows: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(decoded(MessageRow)(rows), (list) =>
      list.map((row): IndexedMessage => ({ index: row.idx, role: row.role, atMs: row.atMs, toolCalls: row.toolCalls, text: row.text })))

  const messagesIn = (sessionId: string, start: number, end: number) =>
    messageRows(
      sql`SELECT * FROM recall_messages WHERE session_id = ${sessionId} AND idx BETWEEN ${start} AND ${end} ORDER BY idx`
    ).pipe(Effect.mapError(failed("read")), Effect.withSpan("kern.recall.store.messagesIn"))

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
      yield* deleteChunks(sql.and([sql`source = 'file'`, sql`path = ${path}`]))
      if (hash === undefined) {
        yield* sql`DELETE FROM recall_files WHERE path = ${path}`
        return
      }
      yield* insertChunks(chunks)
      yield* sql`INSERT INTO recall_files (path, hash) VALUES (${path}, ${hash})
        ON CONFLICT (path) DO UPDATE SET hash = excluded.hash`
    }).pipe(transaction(sql), withVectorsIfTable, Effect.mapError(failed("write")), Effect.withSpan("kern.recall.store.replaceFile"))

  const unembedded = (limit: number, newestFirst = false) =>
    (newestFirst
      ? sql`SELECT * FROM recall_chunks WHERE embedded = 0 ORDER BY id DESC LIMIT ${limit}`
      : sql`SELECT * FROM recall_chunks WHERE embedded = 0 ORDER BY id LIMIT ${limit}`).pipe(
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

  const resetVectors = (space: VectorSpace) =>
    Effect.gen(function*() {
      yield* sql`DROP TABLE IF EXISTS recall_vec`
      yield* sql`DELETE FROM recall_vectors`
      yield* sql`UPDATE recall_chunks SET embedded = 0 WHERE embedded = 1`
      yield* sql`INSERT OR REPLACE INTO recall_meta (key, value) VALUES ('embedding_model', ${space.model}),
        ('embedding_dimension', ${String(space.dimension)})`
      // A vec0 table's dimension is part of its declaration, so it is SQL text: an integer, truncated to be sure.
      yield* sql.unsafe(`CREATE VIRTUAL TABLE recall_vec USING vec0(
        chunk_id integer primary key, bits bit[${Math.trunc(space.dimension)}], start_ms integer, end_ms integer)`)
    }).pipe(
      transaction(sql),
      withVectors,
      Effect.mapError(failed("reset the vectors of")),
      Effect.withSpan("kern.recall.store.resetVectors")
    )

  /** Vectors stored `vectorRows` a statement: the int8 vectors, their binary prefilter rows, the chunks marked. */
  const putVectors = (_dimension: number, vectors: ReadonlyArray<ChunkVector>) =>
    Effect.gen(function*() {
      for (let i = 0; i < vectors.length; i += vectorRows) {
        const part = vectors.slice(i, i + vectorRows)
        const ids = part.map((v) => v.id)
        yield* sql`INSERT OR REPLACE INTO recall_vectors ${sql.insert(part.map((v) => {
          const { scale, values } = quantize(v.vector)
          return { chunkId: v.id, embedding: bytesOf(values), scale }
        }))}`
        yield* sql`DELETE FROM recall_vec WHERE chunk_id IN ${sql.in(ids.map(BigInt))}`
        yield* sql`INSERT INTO recall_vec (chunk_id, bits, start_ms, end_ms) VALUES ${sql.csv(part.map((v) =>
          sql`(${BigInt(v.id)}, vec_quantize_binary(${vectorBlob(v.vector)}), ${BigInt(Math.trunc(v.startMs))}, ${
            BigInt(Math.trunc(v.endMs))
          })`
        ))}`
        yield* sql`UPDATE recall_chunks SET embedded = 1 WHERE id IN ${sql.in(ids)}`
      }
    }).pipe(
      transaction(sql),
      withVectors,
      Effect.mapError(failed("write vectors to")),
      Effect.withSpan("kern.recall.store.putVectors")
    )

  const windowOf = (window: TimeWindow, start: string, end: string) =>
    sql.and([
      ...(window.afterMs === undefined ? [] : [sql`${sql.literal(end)} >= ${BigInt(Math.trunc(window.afterMs))}`]),
      ...(window.beforeMs === undefined ? [] : [sql`${sql.literal(start)} <= ${BigInt(Math.trunc(window.beforeMs))}`])
    ])

  /** The float query's cosine distance to each stored (int8) vector, nearest first. */
  const rescored = (query: Float32Array, rows: ReadonlyArray<{ readonly id: number; readonly embedding: Uint8Array }>) => {
    // Rescored against the float query (not a quantized one): only the stored side carries quantization error.
    const queryNorm = norm(query)
    return rows
      .map((row) => ({ id: row.id, score: cosineDistance(query, queryNorm, int8FromBytes(row.embedding)) }))
      .sort((a, b) => a.score - b.score)
  }

  const vectorSearch = (query: Float32Array, candidates: number, window: TimeWindow, sessions?: SessionFilter) =>
    Effect.gen(function*() {
      if (sessions !== undefined) {
        if (sessions.length === 0) return []
        const rows = yield* candidateRows(sql`SELECT v.chunk_id AS id, v.embedding
          FROM recall_vectors v JOIN recall_chunks c ON c.id = v.chunk_id
          WHERE c.session_id IN ${sql.in(sessions)} AND ${windowOf(window, "c.start_ms", "c.end_ms")}`)
        return rescored(query, rows).slice(0, candidates)
      }
      if (!(yield* hasVecTable)) return []
      yield* vectorExtension
      const rows = yield* candidateRows(sql`WITH candidates AS (
          SELECT chunk_id FROM recall_vec
          WHERE bits MATCH vec_quantize_binary(${vectorBlob(query)}) AND k = ${BigInt(candidates)}
          AND ${windowOf(window, "start_ms", "end_ms")}
        )
        SELECT v.chunk_id AS id, v.embedding FROM candidates c JOIN recall_vectors v ON v.chunk_id = c.chunk_id`)
      return rescored(query, rows)
    }).pipe(Effect.mapError(failed("search")), Effect.withSpan("kern.recall.store.vectorSearch"))

  const scanVectorSearch = (query: Float32Array, limit: number) =>
    withVectors(sql`SELECT chunk_id AS id, vec_distance_cosine(vec_int8(embedding), vec_int8(${bytesOf(quantize(query).values)})) AS score
      FROM recall_vectors ORDER BY score LIMIT ${limit}`).pipe(
      decoded(RankedRow),
      Effect.mapError(failed("search")),
      Effect.withSpan("kern.recall.store.scanVectorSearch")
    )

  const keywordSearch = (query: string, limit: number, window: TimeWindow, sessions?: SessionFilter) => {
    const match = ftsQuery(query)
    if (match === undefined || sessions?.length === 0) return Effect.succeed([])
    const only = sessions === undefined ? sql.and([]) : sql`c.session_id IN ${sql.in(sessions)}`
    const unfiltered = sessions === undefined && window.afterMs === undefined && window.beforeMs === undefined
    // Without a filter the chunks table is not joined: the join cost more than the match and ranking together.
    return (unfiltered
      ? sql`SELECT rowid AS id, bm25(recall_fts) AS score FROM recall_fts WHERE recall_fts MATCH ${match}
        ORDER BY score LIMIT ${limit}`
      : sql`SELECT f.rowid AS id, bm25(recall_fts) AS score
        FROM recall_fts f JOIN recall_chunks c ON c.id = f.rowid
        WHERE recall_fts MATCH ${match} AND ${windowOf(window, "c.start_ms", "c.end_ms")} AND ${only}
        ORDER BY score LIMIT ${limit}`).pipe(
      rankedRows,
      Effect.mapError(failed("search")),
      Effect.withSpan("kern.recall.store.keywordSearch")
    )
  }

  const chunks = (ids: ReadonlyArray<number>) =>
    ids.length === 0
      ? Effect.succeed([])
      : sql`SELECT * FROM recall_chunks WHERE id IN ${sql.in(ids)}`.pipe(chunkRows, Effect.mapError(failed("read")))

  const counts = sql`SELECT
      (SELECT count(*) FROM recall_messages) AS messages,
      (SELECT count(*) FROM recall_chunks) AS chunks,
      (SELECT count(*) FROM recall_chunks WHERE embedded = 0) AS unembedded,
      (SELECT count(*) FROM recall_sessions) AS sessions,
      (SELECT count(*) FROM recall_files) AS files,
      (SELECT min(at_ms) FROM recall_messages) AS from_ms,
      (SELECT max(at_ms) FROM recall_messages) AS to_ms`.pipe(
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
      : sql`INSERT OR REPLACE INTO recall_meta (key, value) VALUES (${`note_${key}`}, ${value})`).pipe(
        Effect.asVoid,
        Effect.mapError(failed("write"))
      )

  return RecallStore.of({
    vectorsUnavailable: Option.none(),
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

/** The recall index in kern.db (SQLite with FTS5 and sqlite-vec). */
export const layer: Layer.Layer<RecallStore, never, SqlClient.SqlClient> = Layer.effect(RecallStore, make)
