import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { RecallStore } from "../../src/recall/RecallStore.js"
import * as RecallStoreSqlite from "../../src/recall/RecallStoreSqlite.js"
import * as Database from "../../src/storage/Database.js"
import { dequantize, int8FromBytes } from "../../src/storage/int8Vector.js"
import { topicVectors } from "../support/seededNormals.js"
import { makeTempDir } from "../support/tempDir.js"

const dimensions = 384
const topics = 20
const perTopic = 10
const limit = 10

/** Chunks near 20 topics (as the 100k bench's corpus, smaller), and queries near them. */
const corpus = () => {
  const near = topicVectors(11, dimensions, topics)
  const vectors = Array.from({ length: topics * perTopic }, (_, i) => near(i))
  const queries = Array.from({ length: topics }, (_, j) => near(j))
  return { vectors, queries }
}

const cosineDistance = (a: Float32Array, b: Float32Array) => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return 1 - dot / Math.sqrt(na * nb)
}

const StoredRows = Schema.Array(Schema.Struct({ chunkId: Schema.Number, embedding: Schema.Uint8ArrayFromSelf, scale: Schema.Number }))

const storeLayer = RecallStoreSqlite.layer.pipe(Layer.provideMerge(Database.layerMemory))

describe("recall vectors in kern.db", () => {
  it.effect("are stored as int8 with a scale (a quarter of float32's bytes) and rank as the exact float32 search", () =>
    Effect.gen(function*() {
      const store = yield* RecallStore
      const sql = yield* SqlClient.SqlClient
      const { queries, vectors } = corpus()
      yield* store.replaceFile("notes/corpus.md", "h", vectors.map((_, i) => ({
        source: "file" as const,
        sessionId: null,
        path: "notes/corpus.md",
        messageStart: i,
        messageEnd: i,
        startMs: i * 1000,
        endMs: i * 1000,
        text: `chunk ${i}`
      })))
      const rows = yield* store.unembedded(1_000)
      expect(rows).toHaveLength(vectors.length)
      yield* store.resetVectors({ model: "m", dimension: dimensions })
      yield* store.putVectors(dimensions, rows.map((row, i) => ({ id: row.id, vector: vectors[i]!, startMs: row.startMs, endMs: row.endMs })))

      const stored = yield* sql`SELECT chunk_id, embedding, scale FROM recall_vectors ORDER BY chunk_id`.pipe(
        Effect.flatMap(Schema.decodeUnknown(StoredRows))
      )
      expect(stored).toHaveLength(vectors.length)
      let worst = 0
      for (const [i, row] of stored.entries()) {
        expect(row.embedding.byteLength).toBe(dimensions)
        const back = dequantize({ values: int8FromBytes(row.embedding), scale: row.scale })
        for (let d = 0; d < dimensions; d++) worst = Math.max(worst, Math.abs(back[d]! - vectors[i]![d]!) / row.scale)
      }
      // Every value within half a step of its original.
      expect(worst).toBeLessThanOrEqual(0.5 + 1e-4)

      const idOf = new Map(rows.map((row, i) => [i, row.id]))
      let overlap = 0
      for (const query of queries) {
        const exact = vectors.map((v, i) => ({ id: idOf.get(i)!, d: cosineDistance(query, v) })).sort((a, b) => a.d - b.d)
        const found = yield* store.vectorSearch(query, limit * 20, { afterMs: undefined, beforeMs: undefined })
        const truth = new Set(exact.slice(0, limit).map((e) => e.id))
        overlap += found.slice(0, limit).filter((r) => truth.has(r.id)).length
        // Within a topic the nearest are near ties, so the first may swap with a second as near; its distance is right.
        expect(Math.abs(found[0]!.score - exact[0]!.d)).toBeLessThan(0.005)
        // Sorted nearest first.
        for (let k = 1; k < found.length; k++) expect(found[k]!.score).toBeGreaterThanOrEqual(found[k - 1]!.score)
      }
      expect(overlap / (queries.length * limit), "recall@10 against the exact float32 search").toBeGreaterThanOrEqual(0.95)

      // The time window still filters inside the prefilter.
      const windowed = yield* store.vectorSearch(queries[0]!, limit * 20, { afterMs: 50_000, beforeMs: 59_000 })
      expect(windowed.length).toBeGreaterThan(0)
      expect(windowed.every((r) => { const i = rows.findIndex((row) => row.id === r.id); return i >= 50 && i <= 59 })).toBe(true)
    }).pipe(Effect.provide(storeLayer)))

  it.effect("written many rows a statement, each chunk keeps its own text, keywords and vector (and a vector replaced)", () =>
    Effect.gen(function*() {
      const store = yield* RecallStore
      const count = 900
      const near = topicVectors(5, dimensions, count)
      // More chunks than one statement takes (400), so the batches and their boundaries are crossed.
      yield* store.addSessionChunks("s1", count, Array.from({ length: count }, (_, i) => ({
        source: "session" as const,
        sessionId: "s1",
        path: null,
        messageStart: i,
        messageEnd: i,
        startMs: i * 1000,
        endMs: i * 1000,
        text: `word${i} shared`
      })))
      const rows = yield* store.unembedded(count)
      expect(rows).toHaveLength(count)
      yield* store.resetVectors({ model: "m", dimension: dimensions })
      yield* store.putVectors(dimensions, rows.map((row) => ({ id: row.id, vector: near(row.messageStart), startMs: row.startMs, endMs: row.endMs })))
      // Stored again (a chunk embedded twice): replaced, not duplicated.
      yield* store.putVectors(dimensions, rows.slice(0, 150).map((row) => ({ id: row.id, vector: near(row.messageStart), startMs: row.startMs, endMs: row.endMs })))
      expect((yield* store.counts).unembedded).toBe(0)
      const window = { afterMs: undefined, beforeMs: undefined }
      for (const i of [0, 399, 400, 401, 799, 800, 899]) {
        const [hit] = yield* store.keywordSearch(`word${i}`, 5, window)
        const [chunk] = yield* store.chunks([hit!.id])
        expect(chunk!.text).toBe(`word${i} shared`)
        const [nearest] = yield* store.vectorSearch(near(i), 50, window)
        const [found] = yield* store.chunks([nearest!.id])
        expect(found!.messageStart).toBe(i)
      }
      const [again] = yield* store.vectorSearch(near(3), 50, window)
      expect(again!.id).toBe(rows[3]!.id)
    }).pipe(Effect.provide(storeLayer)))

  it.effect("sqlite-vec is loaded by the first operation on vectors, not when kern.db opens: each works first on a new connection", () =>
    Effect.gen(function*() {
      const dir = makeTempDir("kern-vec-")
      const fileLayer = RecallStoreSqlite.layer.pipe(Layer.provideMerge(Database.layer({ filename: NodePath.join(dir, "kern.db") })))
      const near = topicVectors(3, dimensions, 4)
      const window = { afterMs: undefined, beforeMs: undefined }
      const chunk = (path: string) => ({
        source: "file" as const, sessionId: null, path, messageStart: 0, messageEnd: 0, startMs: 0, endMs: 0, text: `chunk of ${path}`
      })
      /** Whether the connection has sqlite-vec's functions. */
      const loaded = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT vec_version() AS v`).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
      /** On a connection of its own: whether it had sqlite-vec when opened, the step's result, and whether it has it after. */
      const fresh = <A, E>(step: Effect.Effect<A, E, RecallStore | SqlClient.SqlClient>) =>
        Effect.gen(function*() {
          const before = yield* loaded
          const result = yield* step
          return { before, result, after: yield* loaded }
        }).pipe(Effect.provide(fileLayer))
      try {
        // Chunks and their vectors, written on a first connection.
        const written = yield* fresh(Effect.gen(function*() {
          const store = yield* RecallStore
          for (const path of ["a.md", "b.md", "c.md"]) yield* store.replaceFile(path, `h-${path}`, [chunk(path)])
          const rows = yield* store.unembedded(10)
          yield* store.resetVectors({ model: "m", dimension: dimensions })
          yield* store.putVectors(dimensions, rows.map((row, i) => ({ id: row.id, vector: near(i), startMs: 0, endMs: 0 })))
          return rows.length
        }))
        expect(written).toEqual({ before: false, result: 3, after: true })
        // A search on a new connection.
        const searched = yield* fresh(Effect.map(Effect.flatMap(RecallStore, (store) => store.vectorSearch(near(1), 10, window)), (hits) => hits.length))
        expect(searched).toEqual({ before: false, result: 3, after: true })
        const scanned = yield* fresh(Effect.map(Effect.flatMap(RecallStore, (store) => store.scanVectorSearch(near(1), 10)), (hits) => hits.length))
        expect(scanned).toEqual({ before: false, result: 3, after: true })
        // Deleting a file's chunks deletes their rows of the vec0 table: it loads sqlite-vec first.
        const replaced = yield* fresh(Effect.gen(function*() {
          const store = yield* RecallStore
          yield* store.replaceFile("a.md", undefined, [])
          return (yield* store.counts).chunks
        }))
        expect(replaced).toEqual({ before: false, result: 2, after: true })
        // What touches no vector leaves it unloaded.
        const counted = yield* fresh(Effect.map(Effect.flatMap(RecallStore, (store) => store.counts), (counts) => counts.chunks))
        expect(counted).toEqual({ before: false, result: 2, after: false })
      } finally {
        NodeFs.rmSync(dir, { recursive: true, force: true })
      }
    }))
})
