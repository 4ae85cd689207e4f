import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentConfig } from "../../src/config/AgentConfig.js"
import { bagOfWordsEmbedding } from "../../src/recall/bagOfWords.js"
import * as Embedder from "../../src/recall/Embedder.js"
import { Recall } from "../../src/recall/Recall.js"
import { RecallStore } from "../../src/recall/RecallStore.js"
import * as RecallStoreSqlite from "../../src/recall/RecallStoreSqlite.js"
import * as Database from "../../src/storage/Database.js"
import { dequantize, float32FromBytes, int8FromBytes } from "../../src/storage/int8Vector.js"
import { migrations } from "../../src/storage/migrations.js"
import { answer, appendLines, header, loadedAt, makeAgentDir, recallLayer, sessionPath, user } from "./harness.js"

const sid = "20260101-100000-000-bbbb"
const dimensions = 64
const model = "test-embedding"

const topics = [
  ["my car needs new tyres before winter", "noted: winter tyres for the car"],
  ["the printer in the office jams on thick paper", "try the manual feed tray for thick paper"],
  ["book a table for dinner on friday", "booked a table at the corner restaurant"],
  ["renew the passport before the trip to japan", "the passport office opens at nine"],
  ["water the tomatoes in the greenhouse", "tomatoes watered, the basil too"],
  ["backup of the nas failed last night", "the nas disk was full; pruned old snapshots"],
  ["call the plumber about the leaking kitchen tap", "plumber booked for tuesday morning"],
  ["the router drops wifi every evening", "moved the router channel away from the neighbours"]
]

const queries = ["winter tyres car", "printer thick paper", "passport trip japan", "nas backup snapshots", "leaking tap plumber"]

const vectorOf = (text: string) => Float32Array.from(bagOfWordsEmbedding(text, dimensions))
const blob = (vector: Float32Array) => new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)

/** kern.db as the code before migration 0860 left it: every migration up to it. */
const before0860 = Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0860"))

const ChunkRows = Schema.Array(Schema.Struct({ id: Schema.Number, text: Schema.String, startMs: Schema.Number, endMs: Schema.Number }))
const Ranked = Schema.Array(Schema.Struct({ id: Schema.Number, score: Schema.Number }))
const VectorRows = Schema.Array(Schema.Struct({ chunkId: Schema.Number, embedding: Schema.Uint8ArrayFromSelf, scale: Schema.Number }))

/**
 * Vectors written as the code before 0860 wrote them (RecallStoreSqlite's resetVectors and putVectors of that
 * code, verbatim): float32 blobs, the binary prefilter in vec0, the space in recall_meta.
 */
const writeOldFormatVectors = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TABLE IF EXISTS recall_vec`
  yield* sql`DELETE FROM recall_vectors`
  yield* sql`UPDATE recall_chunks SET embedded = 0 WHERE embedded = 1`
  yield* sql`INSERT OR REPLACE INTO recall_meta (key, value) VALUES ('embedding_model', ${model}),
    ('embedding_dimension', ${String(dimensions)})`
  yield* sql.unsafe(`CREATE VIRTUAL TABLE recall_vec USING vec0(
    chunk_id integer primary key, bits bit[${dimensions}], start_ms integer, end_ms integer)`)
  const chunks = yield* sql`SELECT id, text, start_ms, end_ms FROM recall_chunks ORDER BY id`.pipe(
    Effect.flatMap(Schema.decodeUnknown(ChunkRows))
  )
  for (const chunk of chunks) {
    const bytes = blob(vectorOf(chunk.text))
    yield* sql`INSERT OR REPLACE INTO recall_vectors (chunk_id, embedding) VALUES (${chunk.id}, ${bytes})`
    yield* sql`DELETE FROM recall_vec WHERE chunk_id = ${BigInt(chunk.id)}`
    yield* sql`INSERT INTO recall_vec (chunk_id, bits, start_ms, end_ms)
      VALUES (${BigInt(chunk.id)}, vec_quantize_binary(${bytes}), ${BigInt(chunk.startMs)}, ${BigInt(chunk.endMs)})`
    yield* sql`UPDATE recall_chunks SET embedded = 1 WHERE id = ${chunk.id}`
  }
  return chunks
})

/** The vector query of the code before 0860, verbatim: prefilter, then float cosine over the float blobs. */
const oldVectorSearch = (query: Float32Array) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`WITH candidates AS (
        SELECT chunk_id FROM recall_vec WHERE bits MATCH vec_quantize_binary(${blob(query)}) AND k = ${BigInt(200)}
      )
      SELECT v.chunk_id AS id, vec_distance_cosine(v.embedding, ${blob(query)}) AS score
      FROM candidates c JOIN recall_vectors v ON v.chunk_id = c.chunk_id
      ORDER BY score`.pipe(Effect.flatMap(Schema.decodeUnknown(Ranked))))

describe("migration 0860: recall vectors from float32 to int8", () => {
  it.live("converts an old kern.db: nothing lost, the same top results, a bad blob embedded again, reindex works", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      appendLines(
        sessionPath(dir, sid),
        header(sid),
        ...topics.flatMap(([question, reply], i) => [
          user(question!, `2026-01-0${1 + (i % 9)}T09:00:00.000Z`),
          answer(reply!, `2026-01-0${1 + (i % 9)}T09:00:01.000Z`)
        ])
      )
      const loaded = loadedAt(dir)
      const dbFile = loaded.paths.dbFile

      // The old kern: its migrations, its indexer (keyword-only), then its vectors.
      const oldDatabase = Database.layer({ filename: dbFile, migrations: before0860 })
      const oldRecall = Recall.Default.pipe(
        Layer.provide(RecallStoreSqlite.layer),
        Layer.provide(Layer.mergeAll(
          Embedder.layerNone("embeddingModel is false"),
          Layer.succeed(AgentConfig, loaded),
          KnownSecrets.layerOf(loaded),
          NodeContext.layer
        )),
        Layer.provideMerge(oldDatabase)
      )
      const { chunks, expected, stray } = yield* Effect.gen(function*() {
        yield* (yield* Recall).sync
        const chunks = yield* writeOldFormatVectors
        const expected = yield* Effect.forEach(queries, (q) => oldVectorSearch(vectorOf(q)))
        // A blob that is no float32 vector of the recorded dimension (a torn write, a hand edit).
        const sql = yield* SqlClient.SqlClient
        const stray = chunks[chunks.length - 1]!.id
        yield* sql`UPDATE recall_vectors SET embedding = ${new Uint8Array(10)} WHERE chunk_id = ${stray}`
        return { chunks, expected, stray }
      }).pipe(Effect.provide(oldRecall))
      expect(chunks.length).toBe(topics.length)
      for (const list of expected) {
        // The comparison means something: the old top three are well apart.
        expect(list[1]!.score - list[0]!.score).toBeGreaterThan(0.01)
      }

      // The new kern opens the same file: 0860 runs.
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* RecallStore
        const rows = yield* sql`SELECT chunk_id, embedding, scale FROM recall_vectors ORDER BY chunk_id`.pipe(
          Effect.flatMap(Schema.decodeUnknown(VectorRows))
        )
        expect(rows.map((r) => r.chunkId)).toEqual(chunks.filter((c) => c.id !== stray).map((c) => c.id))
        for (const row of rows) {
          expect(row.embedding.byteLength).toBe(dimensions)
          const original = vectorOf(chunks.find((c) => c.id === row.chunkId)!.text)
          const back = dequantize({ values: int8FromBytes(row.embedding), scale: row.scale })
          for (let d = 0; d < dimensions; d++) expect(Math.abs(back[d]! - original[d]!)).toBeLessThanOrEqual(row.scale / 2 + 1e-6)
        }
        const embedded = yield* sql<{ readonly id: number; readonly embedded: number }>`SELECT id, embedded FROM recall_chunks`
        expect(embedded.find((r) => r.id === stray)!.embedded).toBe(0)
        expect((yield* sql<{ readonly n: number }>`SELECT count(*) AS n FROM recall_vec WHERE chunk_id = ${BigInt(stray)}`)[0]!.n)
          .toBe(0)

        for (const [i, q] of queries.entries()) {
          const found = yield* store.vectorSearch(vectorOf(q), 200, { afterMs: undefined, beforeMs: undefined })
          const old = expected[i]!.filter((r) => r.id !== stray)
          expect(found.slice(0, 3).map((r) => r.id)).toEqual(old.slice(0, 3).map((r) => r.id))
          for (const [k, hit] of found.slice(0, 3).entries()) expect(Math.abs(hit.score - old[k]!.score)).toBeLessThan(0.01)
        }
      }).pipe(Effect.provide(RecallStoreSqlite.layer.pipe(Layer.provideMerge(Database.layer({ filename: dbFile })))))

      // The running agent embeds the dropped chunk again from its text; a reindex rebuilds everything as int8.
      const embedder = Embedder.layerTest({ model, dimensions })
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        const sql = yield* SqlClient.SqlClient
        yield* recall.sync
        expect((yield* recall.stats).unembedded).toBe(0)
        yield* recall.reindex(() => Effect.void)
        const stats = yield* recall.stats
        expect(stats).toMatchObject({ chunks: topics.length, unembedded: 0 })
        expect(stats.embedding).toMatchObject({ mode: "vectors", model, dimension: dimensions })
        const lengths = yield* sql<{ readonly bytes: number }>`SELECT length(embedding) AS bytes FROM recall_vectors`
        expect(lengths.map((r) => r.bytes)).toEqual(topics.map(() => dimensions))
        const hit = yield* recall.search({ query: "automobile winter tyres", limit: 1 })
        expect(hit.mode).toBe("hybrid")
        expect(hit.hits[0]!.text).toContain("winter tyres")
      }).pipe(Effect.provide(recallLayer(loaded, embedder)))
      expect(NodeFs.existsSync(NodePath.join(dir, ".kern", "kern.db"))).toBe(true)
    }))

  it.effect("a fresh kern.db has the int8 table (chunk_id, embedding, scale) and no float32 leftovers", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const columns = yield* sql<{ readonly name: string }>`SELECT name FROM pragma_table_info('recall_vectors')`
      expect(columns.map((c) => c.name)).toEqual(["chunk_id", "embedding", "scale"])
      const tables = yield* sql<{ readonly name: string }>`SELECT name FROM sqlite_master WHERE name LIKE 'recall_vectors%'`
      expect(tables.map((t) => t.name)).toEqual(["recall_vectors"])
      expect(float32FromBytes(new Uint8Array(0)).length).toBe(0)
    }).pipe(Effect.provide(Database.layerMemory)))
})
