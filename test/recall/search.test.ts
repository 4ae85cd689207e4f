import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Logger, Option, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as Embedder from "../../src/recall/Embedder.js"
import { reciprocalRankFusion } from "../../src/recall/fusion.js"
import { oneShotEmbeddingWait, Recall } from "../../src/recall/Recall.js"
import { awaitSleeper } from "../model/clock.js"
import { recallStatus } from "../../src/recall/status.js"
import { make as makeFakeServer } from "../support/fakeModelServer.js"
import { answer, appendLines, header, loadedAt, makeAgentDir, recallLayer, sessionPath, user } from "./harness.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"
import { type RecallDatabase, sqlite } from "./databases.js"
import { postgresServers } from "./servers.js"

const sid = "20260101-100000-000-aaaa"

/** Three conversations on different days. */
const seed = (dir: string) =>
  appendLines(
    sessionPath(dir, sid),
    header(sid),
    user("my car needs new tyres before winter", "2026-01-05T09:00:00.000Z"),
    answer("noted: winter tyres for the car", "2026-01-05T09:00:01.000Z"),
    user("the printer in the office jams on thick paper", "2026-02-10T09:00:00.000Z"),
    answer("try the manual feed tray for thick paper", "2026-02-10T09:00:01.000Z"),
    user("book a table for dinner on friday", "2026-03-15T09:00:00.000Z"),
    answer("booked a table at the corner restaurant", "2026-03-15T09:00:01.000Z")
  )

/** The agent's embedder against the fake server, with `embeddingModel` set so the provider's /embeddings is used. */
const httpConfig = (baseURL: string) => ({ provider: "ollama", model: "m", embeddingModel: "fake-embed", baseURL })
const httpEmbedder = (dir: string, baseURL: string) =>
  Embedder.layerFromLoaded(loadedAt(dir, httpConfig(baseURL))).pipe(Layer.provide(SpendGuard.layerNone)).pipe(Layer.provide(NodeHttpClient.layerUndici))

// The same behaviour on every database kern.db can be: SQLite, PostgreSQL with pgvector (PGlite over pglite-socket)
// and the real PostgreSQL 15 (no pgvector: the keyword tests). The embedder's own failures are tested on SQLite.
const servers = postgresServers({ pglite: true, postgres: true })
const databases: ReadonlyArray<RecallDatabase> = [sqlite, servers.pglite, servers.postgres]
/** A test that runs on every database / only where vectors are kept / on SQLite only (the embedder's behaviour). */
const everywhere = (_: RecallDatabase) => true
const vectorsKept = (database: RecallDatabase) => database.vectors
const sqliteOnly = (database: RecallDatabase) => database === sqlite

it("fuses by reciprocal rank (k = 60): agreement beats one list's top", () => {
  const fused = reciprocalRankFusion([[1, 2, 3], [2, 4, 1]])
  expect(fused.map((f) => f.id)).toEqual([2, 1, 4, 3])
  expect(fused[0]!.score).toBeCloseTo(1 / 62 + 1 / 61)
  expect(fused[1]!.score).toBeCloseTo(1 / 61 + 1 / 63)
})

describe.each(databases)("recall search on $name", (database) => {

  it.live.runIf(everywhere(database))("keyword search works with embeddings off, and after / before filter inside the query", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      seed(dir)
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        const result = yield* recall.search({ query: "printer jams" })
        expect(result.mode).toBe("keyword")
        expect(result.hits[0]!.text).toContain("printer in the office")
        expect(result.hits[0]!).toMatchObject({ source: "session", sessionId: sid, messageStart: 2, messageEnd: 3, distance: null })
        expect((yield* recall.stats).embedding).toMatchObject({ mode: "keyword", reason: "embeddingModel is false" })

        // "the" is in every chunk: the window decides.
        const all = yield* recall.search({ query: "the", limit: 10 })
        expect(all.hits).toHaveLength(3)
        const feb = yield* recall.search({ query: "the", after: "2026-02-01", before: "2026-02-28", limit: 10 })
        expect(feb.hits.map((h) => h.messageStart)).toEqual([2])
        // A bare date as `before` covers that whole day.
        const upToMarch15 = yield* recall.search({ query: "the", after: "2026-03-15", before: "2026-03-15", limit: 10 })
        expect(upToMarch15.hits.map((h) => h.messageStart)).toEqual([4])

        // Ranges already in the context are not returned.
        const excluded = yield* recall.search({
          query: "printer",
          exclude: [{ sessionId: sid, messageStart: 3, messageEnd: 10 }]
        })
        expect(excluded.hits).toEqual([])
        // FTS syntax in a query is taken as words, never as an expression.
        expect((yield* recall.search({ query: "printer\" OR NOT (* NEAR" })).hits[0]!.messageStart).toBe(2)
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), undefined, database)))
    }))

  it.scopedLive.runIf(vectorsKept(database))("a paraphrase with no shared keyword is found through vectors from the provider's /embeddings", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.embeddings({
        bagOfWords: { dimensions: 64, synonyms: { automobile: "car", vehicle: "car", tires: "tyres", cold: "winter", season: "winter" } }
      })
      const dir = makeAgentDir()
      seed(dir)
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        const stats = yield* recall.stats
        expect(stats.embedding).toMatchObject({ mode: "vectors", model: "fake-embed", dimension: 64 })
        expect(stats.unembedded).toBe(0)
        // No word in common with the car conversation ("automobile tires cold season").
        const result = yield* recall.search({ query: "automobile tires cold season", limit: 1 })
        expect(result.mode).toBe("hybrid")
        expect(result.hits[0]!.text).toContain("my car needs new tyres")
        expect(result.hits[0]!.distance).toBeLessThan(0.5)
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), httpEmbedder(dir, server.baseURL), database)))
      const embeds = (yield* server.requests).filter((r) => r.path === "/embeddings")
      // One batch for the three chunks, one for the query.
      expect(embeds).toHaveLength(2)
    }))

  it.live.runIf(vectorsKept(database))("after / before filter inside the vector query too: a near chunk outside the window is never a hit", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      seed(dir)
      const synonyms = { automobile: "car", tires: "tyres", cold: "winter" }
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        // No word in common with any chunk: every hit comes from the vectors.
        const query = "automobile tires cold"
        const all = yield* recall.search({ query, limit: 10 })
        expect(all.mode).toBe("hybrid")
        expect(all.hits.map((h) => h.messageStart)).toEqual([0, expect.any(Number), expect.any(Number)])
        const later = yield* recall.search({ query, after: "2026-02-01", limit: 10 })
        expect(later.hits.map((h) => h.messageStart).sort()).toEqual([2, 4])
        for (const hit of later.hits) expect(hit.distance).not.toBeNull()
        const january = yield* recall.search({ query, before: "2026-01-31", limit: 10 })
        expect(january.hits.map((h) => h.messageStart)).toEqual([0])
        const february = yield* recall.search({ query, after: "2026-02-10", before: "2026-02-10", limit: 10 })
        expect(february.hits.map((h) => h.messageStart)).toEqual([2])
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), Embedder.layerTest({ dimensions: 64, synonyms }), database)))
    }))

  it.live.runIf(vectorsKept(database))("a change of model or dimension rebuilds the vectors from stored chunk text, not from the session files", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      seed(dir)
      yield* Effect.gen(function*() {
        yield* (yield* Recall).sync
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), Embedder.layerTest({ model: "a", dimensions: 32 }), database)))
      // The session file is gone from under the index's feet: the rebuild must not need it.
      NodeFs.renameSync(sessionPath(dir, sid), `${sessionPath(dir, sid)}.away`)
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        // Only the embedding pass, not a session pass (the file is away and would be forgotten).
        const sql = yield* SqlClient.SqlClient
        const before = yield* sql<{ readonly n: number }>`SELECT CAST(count(*) AS integer) AS n FROM recall_vectors`
        expect(before[0]!.n).toBe(3)
        yield* recall.syncSession("no-such-session")
        const stats = yield* recall.stats
        expect(stats.embedding).toMatchObject({ model: "b", dimension: 48 })
        expect(stats.unembedded).toBe(0)
        expect(yield* database.vectorWidths).toEqual([48, 48, 48])
        const hit = yield* recall.search({ query: "thick paper printer", limit: 1 })
        expect(hit.mode).toBe("hybrid")
        expect(hit.hits[0]!.messageStart).toBe(2)
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), Embedder.layerTest({ model: "b", dimensions: 48 }), database)))
    }))

  it.live.runIf(vectorsKept(database))("a one-shot chat's pass embeds its own newest chunks (one batch); the backlog waits for a full pass", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      const turns = Array.from({ length: 150 }, (_, i) => [user(`question ${i}`), answer(`answer ${i}`)]).flat()
      appendLines(sessionPath(dir, sid), header(sid), ...turns)
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        expect(yield* recall.syncSession(sid)).toBe(300)
        const stats = yield* recall.stats
        expect(stats).toMatchObject({ chunks: 150, unembedded: 50 })
        const sql = yield* SqlClient.SqlClient
        const newest = yield* sql<{ readonly embedded: number }>`SELECT embedded FROM recall_chunks ORDER BY id DESC LIMIT 1`
        expect(newest[0]!.embedded).toBe(1)
        yield* recall.sync
        expect((yield* recall.stats).unembedded).toBe(0)
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), Embedder.layerTest({ dimensions: 16 }), database)))
    }))

  it.scoped.runIf(sqliteOnly(database))("a one-shot chat's pass waits for an embedding endpoint that does not answer 3 s at most: keywords indexed, chunks left to embed", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      seed(dir)
      const stalled = Layer.succeed(Embedder.Embedder, { model: Option.some("stalled"), offReason: "", embed: () => Effect.never })
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        // Uninterruptible, as the one-shot chat's finalizer runs it (src/agent/Agent.ts).
        const fiber = yield* Effect.fork(Effect.uninterruptible(recall.syncSession(sid)))
        const wait = yield* awaitSleeper
        expect(wait).toBe(Duration.toMillis(oneShotEmbeddingWait))
        yield* TestClock.adjust(wait)
        expect(yield* Fiber.join(fiber)).toBe(6)
        // Indexed for keyword search; every chunk waits for a later run's embedding.
        expect(yield* recall.stats).toMatchObject({ chunks: 3, unembedded: 3 })
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), stalled, database)))
    }))

  it.scopedLive.runIf(vectorsKept(database))("an endpoint answering 404 gives keyword-only recall that still works, and says why", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.embeddings({ status: 404 })
      const dir = makeAgentDir()
      seed(dir)
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        const stats = yield* recall.stats
        expect(stats.embedding.mode).toBe("keyword")
        expect(stats.embedding.reason).toContain("HTTP 404")
        const result = yield* recall.search({ query: "dinner table" })
        expect(result.mode).toBe("keyword")
        expect(result.hits[0]!.messageStart).toBe(4)
        // `kern status` (another process: no embedder, kern.db alone) says so too, from the note the pass left.
        const status = yield* recallStatus(loadedAt(dir, httpConfig(server.baseURL)), false)
        expect(status.embedding).toMatchObject({ mode: "keyword", model: "fake-embed" })
        expect(status.embedding.reason).toContain("HTTP 404")
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), httpEmbedder(dir, server.baseURL), database)))
    }))

  it.scopedLive.runIf(sqliteOnly(database))("an endpoint answering 500 is retried, then the pass goes on without vectors and tries again later", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.embeddings({ status: 500 })
      const dir = makeAgentDir()
      seed(dir)
      const logged: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        logged.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
      })
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        // The failure is one warning; its retries are info lines (a terminal shows warnings).
        expect(logged.filter((line) => line.startsWith("WARN"))).toEqual([expect.stringContaining("recall embeddings failed")])
        expect(logged.filter((line) => line.startsWith("INFO") && line.includes("retrying in"))).toHaveLength(3)
        let stats = yield* recall.stats
        expect(stats.chunks).toBe(3)
        expect(stats.unembedded).toBe(3)
        expect(stats.embedding.mode).toBe("vectors")
        expect(stats.embedding.reason).toContain("HTTP 500")
        // The provider recovers: the next pass embeds what waited.
        yield* server.embeddings({ bagOfWords: { dimensions: 16 } })
        yield* recall.sync
        stats = yield* recall.stats
        expect(stats.unembedded).toBe(0)
        expect(stats.embedding.reason).toBeNull()
      }).pipe(
        Effect.provide(recallLayer(loadedAt(dir), httpEmbedder(dir, server.baseURL), database)),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      // 4 attempts for the chunks' batch (the provider retry schedule) before giving up.
      const embeds = (yield* server.requests).filter((r) => r.path === "/embeddings")
      expect(embeds.length).toBe(4 + 1)
    }))

  it.scopedLive.runIf(sqliteOnly(database))("a search does not ride out a failing endpoint's retries: it answers by keywords after a short wait", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.embeddings({ bagOfWords: { dimensions: 16 } })
      const dir = makeAgentDir()
      seed(dir)
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        expect((yield* recall.stats).unembedded).toBe(0)
        yield* server.embeddings({ status: 500 })
        const before = (yield* server.requests).filter((r) => r.path === "/embeddings").length
        const { hits } = yield* recall.search({ query: "thick paper" })
        expect(hits.length).toBeGreaterThan(0)
        expect(hits.every((hit) => hit.distance === null)).toBe(true)
        // The retry schedule makes 4 attempts over about 7 s; the search gave up within its wait, before the last.
        const tried = (yield* server.requests).filter((r) => r.path === "/embeddings").length - before
        expect(tried).toBeGreaterThan(0)
        expect(tried).toBeLessThan(4)
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), httpEmbedder(dir, server.baseURL), database)))
    }))
})

describe.each(databases)("recall load on $name", (database) => {
  it.live.runIf(everywhere(database))("returns messages in full with roles and times, paged by characters with the next start given", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      seed(dir)
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        const whole = yield* recall.load({ sessionId: sid, messageStart: 0, messageEnd: 5 })
        expect(whole.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"])
        expect(whole.messages[2]).toMatchObject({ index: 2, at: "2026-02-10T09:00:00.000Z", text: "the printer in the office jams on thick paper" })
        expect(whole.nextMessageStart).toBeNull()

        const pages: Array<string> = []
        let start: number | null = 0
        while (start !== null) {
          const page: typeof whole = yield* recall.load({ sessionId: sid, messageStart: start, messageEnd: 5, maxChars: 60 })
          expect(page.messages.length).toBeGreaterThan(0)
          pages.push(...page.messages.map((m) => m.text))
          start = page.nextMessageStart
        }
        // Every message once, whole, in order: nothing cut, nothing lost.
        expect(pages).toEqual(whole.messages.map((m) => m.text))

        const missing = yield* Effect.flip(recall.load({ sessionId: "nope", messageStart: 0, messageEnd: 3 }))
        expect(missing.reason).toBe("not_found")
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), undefined, database)))
    }))
})
