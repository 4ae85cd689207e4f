import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as Embedder from "../../src/recall/Embedder.js"
import { recallCheck } from "../../src/cli/doctor/recallIndex.js"
import { recallStatus } from "../../src/recall/status.js"
import { noVectorsReason } from "../../src/recall/pg/RecallStorePostgres.js"
import { Recall } from "../../src/recall/Recall.js"
import { type NewChunk, RecallStore } from "../../src/recall/RecallStore.js"
import * as RecallStoreForClient from "../../src/recall/storeForClient.js"
import { topicVectors } from "../support/seededNormals.js"
import { type RecallDatabase, sqlite } from "./databases.js"
import { answer, appendLines, header, loadedAt, makeAgentDir, recallLayer, sessionPath, user } from "./harness.js"
import { postgresServers } from "./servers.js"

// The recall store's behaviour on each database kern.db can be: SQLite (FTS5, sqlite-vec), PostgreSQL with pgvector
// (PGlite over pglite-socket, reached by @effect/sql-pg as a server is) and the real PostgreSQL 15 without it.

const servers = postgresServers({ pglite: true, postgres: true })
const databases: ReadonlyArray<RecallDatabase> = [sqlite, servers.pglite, servers.postgres]
const withVectors = databases.filter((database) => database.vectors)

/** The store of a fresh agent folder on `database`, chosen by the client's dialect as kern chooses it. */
const storeOn = (database: RecallDatabase) =>
  Layer.unwrapEffect(Effect.sync(() =>
    RecallStoreForClient.layer.pipe(Layer.provideMerge(database.sqlLayer(loadedAt(makeAgentDir()))))
  ))

const everywhen = { afterMs: undefined, beforeMs: undefined }

const sessionChunk = (i: number, text: string, sessionId = "s1"): NewChunk => ({
  source: "session",
  sessionId,
  path: null,
  messageStart: i,
  messageEnd: i,
  startMs: i * 1000,
  endMs: i * 1000,
  text
})

/**
 * Queries a user (or a model) may send: every character tsquery or SQL gives a meaning to, escapes, NUL, a very long
 * one, scripts other than Latin, emoji. None may fail or be read as syntax.
 */
const hostileQueries: ReadonlyArray<string> = [
  "'",
  "''",
  "\"",
  "printer'; DROP TABLE recall_chunks; --",
  "printer & | ! ( ) : * <-> <2>",
  "!printer",
  "printer:*",
  "printer:A",
  "(printer | paper) & !(office)",
  "\\",
  "printer\\",
  "\\'printer\\'",
  "\u0000",
  "printer\u0000paper",
  "$1 $$ $tag$ printer $tag$",
  "%_ printer%",
  "printer".repeat(1) + " " + "x".repeat(10_000),
  Array.from({ length: 2_000 }, (_, i) => `w${i}`).join(" "),
  "プリンターが紙詰まり",
  "принтер бумага",
  "طابعة ورق",
  "打印机 卡纸",
  "🖨️ printer 📄",
  "👨‍👩‍👧‍👦",
  "\uD800 lone surrogate printer",
  "   ",
  ""
]

describe.each(databases)("the recall store on $name", (database) => {
  it.live("no query is syntax: every hostile one answers without error, and the words in it are still found", () =>
    Effect.gen(function*() {
      const store = yield* RecallStore
      yield* store.addSessionChunks("s1", 4, [
        sessionChunk(0, "user: the printer in the office jams on thick paper"),
        sessionChunk(1, "user: プリンターが紙詰まりしました"),
        sessionChunk(2, "user: принтер снова жуёт бумагу"),
        sessionChunk(3, "user: a line with a NUL \u0000 in it and a 🖨️")
      ])
      for (const query of hostileQueries) {
        const hits = yield* store.keywordSearch(query, 10, everywhen)
        const ids = new Set(hits.map((hit) => hit.id))
        expect(ids.size, `no duplicate hits for ${JSON.stringify(query.slice(0, 40))}`).toBe(hits.length)
        const chunks = yield* store.chunks([...ids])
        if (/printer/.test(query)) {
          expect(chunks.map((c) => c.messageStart), `"printer" is found in ${JSON.stringify(query.slice(0, 40))}`).toContain(0)
        }
      }
      // The tables are all still there (the DROP in a query was a word).
      expect((yield* store.counts).chunks).toBe(4)
      // Words of other scripts are found as words.
      const russian = yield* store.chunks((yield* store.keywordSearch("принтер", 5, everywhen)).map((h) => h.id))
      expect(russian.map((c) => c.messageStart)).toEqual([2])
      // A NUL in stored text does not lose the chunk.
      const nul = yield* store.chunks((yield* store.keywordSearch("nul", 5, everywhen)).map((h) => h.id))
      expect(nul.map((c) => c.messageStart)).toEqual([3])
    }).pipe(Effect.provide(storeOn(database))), 120_000)

  it.live("keywords are ranked (more of the words first), filtered by window and sessions inside the query", () =>
    Effect.gen(function*() {
      const store = yield* RecallStore
      yield* store.addSessionChunks("a", 3, [
        sessionChunk(0, "user: the boat is moored at the pier", "a"),
        sessionChunk(1, "user: the boat needs paint and the pier needs repair, boat boat", "a"),
        sessionChunk(2, "user: nothing about water here", "a")
      ])
      yield* store.addSessionChunks("b", 1, [sessionChunk(3, "user: another boat at another pier", "b")])
      const ranked = yield* store.chunks((yield* store.keywordSearch("boat pier", 10, everywhen)).map((h) => h.id))
      const ranks = (yield* store.keywordSearch("boat pier", 10, everywhen)).map((h) => ranked.find((c) => c.id === h.id)!.messageStart)
      expect(ranks.sort()).toEqual([0, 1, 3])
      // Stemmed as FTS5's porter: "boats" finds "boat"; and no stop words: "the" is a word like any other.
      expect((yield* store.keywordSearch("boats", 10, everywhen)).length).toBe(3)
      expect((yield* store.keywordSearch("the", 10, everywhen)).length).toBe(2)
      const windowed = yield* store.keywordSearch("boat", 10, { afterMs: 1_000, beforeMs: 2_000 })
      expect((yield* store.chunks(windowed.map((h) => h.id))).map((c) => c.messageStart)).toEqual([1])
      const onlyB = yield* store.keywordSearch("boat", 10, everywhen, ["b"])
      expect((yield* store.chunks(onlyB.map((h) => h.id))).map((c) => c.sessionId)).toEqual(["b"])
      expect(yield* store.keywordSearch("boat", 10, everywhen, [])).toEqual([])
      // Lower is better, as BM25 on SQLite.
      const scores = (yield* store.keywordSearch("boat", 10, everywhen)).map((h) => h.score)
      expect([...scores].sort((x, y) => x - y)).toEqual(scores)
    }).pipe(Effect.provide(storeOn(database))), 120_000)
})

const dimensions = 384

describe.each(withVectors)("recall vectors on $name", (database) => {
  it.live("written many rows a statement, each chunk keeps its own text, keywords and vector (and a vector replaced)", () =>
    Effect.gen(function*() {
      const store = yield* RecallStore
      expect(Option.isNone(store.vectorsUnavailable)).toBe(true)
      const count = 900
      const near = topicVectors(5, dimensions, count)
      yield* store.addSessionChunks("s1", count, Array.from({ length: count }, (_, i) => sessionChunk(i, `word${i} shared`)))
      const rows = yield* store.unembedded(count)
      expect(rows).toHaveLength(count)
      yield* store.resetVectors({ model: "m", dimension: dimensions })
      yield* store.putVectors(dimensions, rows.map((row) => ({ id: row.id, vector: near(row.messageStart), startMs: row.startMs, endMs: row.endMs })))
      yield* store.putVectors(dimensions, rows.slice(0, 150).map((row) => ({ id: row.id, vector: near(row.messageStart), startMs: row.startMs, endMs: row.endMs })))
      expect((yield* store.counts).unembedded).toBe(0)
      for (const i of [0, 399, 400, 401, 799, 800, 899]) {
        const [hit] = yield* store.keywordSearch(`word${i}`, 5, everywhen)
        const [chunk] = yield* store.chunks([hit!.id])
        expect(chunk!.text).toBe(`word${i} shared`)
        const [nearest] = yield* store.vectorSearch(near(i), 50, everywhen)
        const [found] = yield* store.chunks([nearest!.id])
        expect(found!.messageStart).toBe(i)
      }
      // A window and a session filter apply inside the vector query: the nearest outside them is never returned.
      const windowed = yield* store.vectorSearch(near(10), 50, { afterMs: 500_000, beforeMs: 509_000 })
      expect(windowed.length).toBe(10)
      expect((yield* store.chunks(windowed.map((r) => r.id))).every((c) => c.startMs >= 500_000 && c.startMs <= 509_000)).toBe(true)
      expect(yield* store.vectorSearch(near(10), 50, everywhen, ["elsewhere"])).toEqual([])
      const own = yield* store.vectorSearch(near(10), 5, everywhen, ["s1"])
      expect((yield* store.chunks([own[0]!.id]))[0]!.messageStart).toBe(10)
      // A chunk gone takes its vector with it.
      yield* store.resetSession("s1")
      expect(yield* store.vectorSearch(near(10), 50, everywhen)).toEqual([])
    }).pipe(Effect.provide(storeOn(database))), 180_000)
})

const topics = 20
const perTopic = 10
const limit = 10

/** The first `limit` ids by distance, with the ids tied (within `tie`) with the last one counted in. */
const topIds = (ranked: ReadonlyArray<{ readonly id: number; readonly score: number }>, tie: number) => {
  const last = ranked[limit - 1]!.score
  return {
    sure: new Set(ranked.filter((r) => r.score < last - tie).map((r) => r.id)),
    possible: new Set(ranked.filter((r) => r.score <= last + tie).map((r) => r.id))
  }
}

describe("recall@10 on the same vectors", () => {
  it.live("is equal on SQLite (int8, binary prefilter) and PostgreSQL (pgvector, HNSW), within tie order", () =>
    Effect.gen(function*() {
      const near = topicVectors(11, dimensions, topics)
      const vectors = Array.from({ length: topics * perTopic }, (_, i) => near(i))
      const queries = Array.from({ length: topics }, (_, j) => near(j))
      const searchAll = (database: RecallDatabase) =>
        Effect.gen(function*() {
          const store = yield* RecallStore
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
          yield* store.resetVectors({ model: "m", dimension: dimensions })
          yield* store.putVectors(dimensions, rows.map((row) => ({ id: row.id, vector: vectors[row.messageStart]!, startMs: row.startMs, endMs: row.endMs })))
          const position = new Map(rows.map((row) => [row.id, row.messageStart]))
          const results: Array<ReadonlyArray<{ readonly id: number; readonly score: number }>> = []
          for (const query of queries) {
            const found = yield* store.vectorSearch(query, limit * 20, everywhen)
            // By position in the corpus: the two stores number their chunks each their own way.
            results.push(found.map((r) => ({ id: position.get(r.id)!, score: r.score })))
          }
          return results
        }).pipe(Effect.provide(storeOn(database)))
      const onSqlite = yield* searchAll(sqlite)
      const onPostgres = yield* searchAll(servers.pglite)
      for (let j = 0; j < queries.length; j++) {
        // int8 storage moves a distance by up to ~0.002: neighbours closer than that may swap places.
        const a = topIds(onSqlite[j]!, 0.003)
        const b = topIds(onPostgres[j]!, 0.003)
        for (const id of a.sure) expect(b.possible.has(id), `query ${j}: ${id} is in SQLite's top 10, not PostgreSQL's`).toBe(true)
        for (const id of b.sure) expect(a.possible.has(id), `query ${j}: ${id} is in PostgreSQL's top 10, not SQLite's`).toBe(true)
        expect(Math.abs(onSqlite[j]![0]!.score - onPostgres[j]![0]!.score)).toBeLessThan(0.005)
      }
    }), 240_000)
})

describe("PostgreSQL without pgvector", () => {
  it.live("says so once, as a typed notice: recall embeds nothing and searches by keywords, stats say why", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      const sid = "20260101-100000-000-aaaa"
      appendLines(sessionPath(dir, sid), header(sid), user("the printer jams on thick paper"), answer("use the manual feed"))
      // An embedder that must never be called: a server without pgvector stores no vectors.
      const neverCalled = Layer.succeed(Embedder.Embedder, {
        model: Option.some("m"),
        offReason: "",
        embed: () => Effect.die("the embedder was called although the database keeps no vectors")
      })
      yield* Effect.gen(function*() {
        const store = yield* RecallStore
        expect(Option.getOrThrow(store.vectorsUnavailable)).toMatchObject({ _tag: "VectorsUnavailable", reason: noVectorsReason })
        const recall = yield* Recall
        yield* recall.sync
        const stats = yield* recall.stats
        expect(stats.embedding).toMatchObject({ mode: "keyword", reason: noVectorsReason })
        const result = yield* recall.search({ query: "printer paper" })
        expect(result.mode).toBe("keyword")
        expect(result.hits[0]!.text).toContain("printer jams")
        // A reindex tries the embeddings again where it may: here it may not.
        yield* recall.reindex(() => Effect.void)
        expect((yield* recall.stats).embedding.mode).toBe("keyword")
        // `kern status` and `kern doctor` (another process: kern.db alone, no embedder) say it too.
        const configured = loadedAt(dir, { provider: "ollama", model: "m", embeddingModel: "e", baseURL: "http://127.0.0.1:9" })
        expect((yield* recallStatus(configured, false)).embedding).toMatchObject({ mode: "keyword", reason: noVectorsReason })
        const doctor = yield* recallCheck(configured, false)
        expect(doctor.level).toBe("warning")
        expect(doctor.summary).toContain("no pgvector extension")
        expect(doctor.summary).not.toContain("without a vector yet")
      }).pipe(Effect.provide(
        RecallStoreForClient.layer.pipe(Layer.provideMerge(recallLayer(loadedAt(dir), neverCalled, servers.postgres)))
      ))
    }), 120_000)
})
