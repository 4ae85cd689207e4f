import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Fiber, Layer, Option, Schema, String as Str } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as Embedder from "../../src/recall/Embedder.js"
import { candidatesPerHit, keywordCandidatesPerHit, Recall } from "../../src/recall/Recall.js"
import { RecallStore } from "../../src/recall/RecallStore.js"
import * as RecallStoreSqlite from "../../src/recall/RecallStoreSqlite.js"
import * as RecallStoreForClient from "../../src/recall/storeForClient.js"
import { recallMigration } from "../../src/recall/pg/schema.js"
import { PgClient } from "@effect/sql-pg"
import { startPostgres } from "../support/postgres.js"
import * as Database from "../../src/storage/Database.js"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { normalized, seededNormals } from "../support/seededNormals.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { type Bench, median } from "./bench.js"
import { benchAgent, startModelServerProcess, storeLayer } from "./fixtures.js"

const dimensions = 1536
const chunks = 100_000
const queries = 50
const limit = 10
/** Latent directions the corpus is made of (themes a chunk touches), and how many each chunk mixes. */
const latents = 4_000
const latentsPerChunk = 4
const vocabulary = 20_000
const wordsPerChunk = 60

/**
 * A corpus shaped like embeddings of real text without being trivially clustered: each chunk mixes 4 of 4,000
 * latent directions with random weights, plus noise as large as the mix. Two chunks sharing a latent are near, one
 * sharing two nearer still, and most share none: neighbours are graded, not a cluster of a hundred twins (a top 10
 * that any prefilter of the right cluster returns). A query is a chunk's mix with fresh noise (something asked
 * about what one chunk says), so its exact top 10 is spread over the chunks sharing any of its latents.
 */
const makeCorpus = () => {
  const gauss = seededNormals(42)
  const directions = Array.from({ length: latents }, () => Float32Array.from({ length: dimensions }, gauss))
  const mixOf = (i: number) => {
    const pick = seededNormals(1_000_003 * i + 7)
    return Array.from({ length: latentsPerChunk }, () => ({
      latent: Math.floor(Math.abs(pick() * 7919)) % latents,
      weight: 0.3 + Math.abs(pick())
    }))
  }
  const vectorOf = (mix: ReturnType<typeof mixOf>, noise: () => number, noiseScale: number) => {
    const total = Math.sqrt(mix.reduce((sum, m) => sum + m.weight * m.weight, 0))
    const v = new Float32Array(dimensions)
    for (let d = 0; d < dimensions; d++) v[d] = noiseScale * total * noise()
    for (const m of mix) {
      const direction = directions[m.latent]!
      for (let d = 0; d < dimensions; d++) v[d]! += m.weight * direction[d]!
    }
    return normalized(v)
  }
  const chunk = (i: number) => vectorOf(mixOf(i), seededNormals(i), 1)
  /** Query j asks about chunk 1,999·j: its mix, other noise. */
  const about = (j: number) => 1 + ((1_999 * j) % chunks)
  const query = (j: number) => vectorOf(mixOf(about(j)), seededNormals(7_000_000 + j), 1)
  // Words: Zipf-like over the vocabulary, a chunk's own words and its latents' words.
  const wordOf = (r: number) => `w${Math.floor(Math.pow(vocabulary, r))}`
  const textOf = (i: number) => {
    const rng = seededNormals(9_000_000 + i)
    const mix = mixOf(i)
    return Array.from({ length: wordsPerChunk }, (_, w) =>
      w % 3 === 0 ? `t${mix[w % latentsPerChunk]!.latent}` : wordOf(Math.min(0.999, Math.abs(rng()) / 3))).join(" ")
  }
  const queryText = (j: number) => {
    const mix = mixOf(about(j))
    return `what did we say about t${mix[0]!.latent} and t${mix[1]!.latent} ${wordOf(0.5)} ${wordOf(0.8)}`
  }
  return { chunk, query, textOf, queryText }
}

type Corpus = ReturnType<typeof makeCorpus>

/** 100,000 chunks with their texts and vectors, through the store (as the indexer writes them), 1,000 a transaction. */
const fill = (corpus: Corpus) =>
  Effect.gen(function*() {
    const store = yield* RecallStore
    yield* store.resetVectors({ model: "bench", dimension: dimensions })
    for (let from = 1; from <= chunks; from += 1_000) {
      const ids = Array.from({ length: Math.min(1_000, chunks - from + 1) }, (_, k) => from + k)
      yield* store.addSessionChunks("bench", 0, ids.map((i) => ({
        source: "session" as const,
        sessionId: "bench",
        path: null,
        messageStart: i,
        messageEnd: i,
        startMs: i * 1000,
        endMs: i * 1000,
        text: corpus.textOf(i)
      })))
      const pending = yield* store.unembedded(1_000)
      // The truth is computed by position: the store must have numbered the chunks as they were generated.
      if (pending.some((row) => row.id !== row.messageStart)) return yield* Effect.die("chunk ids are not 1…n")
      yield* store.putVectors(dimensions, pending.map((row) => ({
        id: row.id,
        vector: corpus.chunk(row.messageStart),
        startMs: row.startMs,
        endMs: row.endMs
      })))
    }
  })

/** The exact top `limit` of every query by float32 cosine over the corpus as generated (the store keeps int8). */
const groundTruth = (corpus: Corpus, queries: ReadonlyArray<Float32Array>): Array<Set<number>> => {
  const best = queries.map(() => [] as Array<{ readonly id: number; readonly dot: number }>)
  for (let i = 1; i <= chunks; i++) {
    const v = corpus.chunk(i)
    for (let j = 0; j < queries.length; j++) {
      const q = queries[j]!
      let dot = 0
      for (let d = 0; d < dimensions; d++) dot += q[d]! * v[d]!
      const top = best[j]!
      if (top.length < limit || dot > top[top.length - 1]!.dot) {
        top.push({ id: i, dot })
        top.sort((a, b) => b.dot - a.dot)
        if (top.length > limit) top.pop()
      }
    }
  }
  return best.map((top) => new Set(top.map((t) => t.id)))
}

/**
 * An embedder that answers the corpus's query texts from memory (the query vectors, in order), adding the time of
 * its calls to `embedding.ms` so that a timed search can leave them out.
 */
const queryEmbedder = (corpus: ReturnType<typeof makeCorpus>) => {
  const queryVectors = Array.from({ length: queries + 2 }, (_, j) => corpus.query(j))
  const vectorOfText = new Map(queryVectors.map((v, j) => [corpus.queryText(j), v]))
  const embedding = { ms: 0 }
  const embedder = Layer.succeed(Embedder.Embedder, {
    model: Option.some("bench"),
    offReason: "",
    embed: (texts: ReadonlyArray<string>) =>
      Effect.sync(() => {
        const start = performance.now()
        const vectors = texts.map((text) => vectorOfText.get(text) ?? new Float32Array(dimensions))
        embedding.ms += performance.now() - start
        return vectors
      })
  })
  return { queryVectors, embedder, embedding }
}

/**
 * The whole search a user runs (`Recall.search` at the shipped default limit: keywords, vectors, row fetch,
 * fusion) over 100,000 chunks of 1,536 dimensions, against the scan of every stored vector for the same query,
 * alternating. The query's embedding is timed apart (extra `embeddingMs`, out of the samples). `recallAt10`: the
 * shipped vector search (binary prefilter of 10 × candidatesPerHit, rescored) against the exact float32 top 10.
 */
const search100k = async () => {
  const agent = benchAgent(undefined)
  try {
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const corpus = makeCorpus()
      const { queryVectors, embedder, embedding } = queryEmbedder(corpus)
      const base = yield* Layer.build(storeLayer(agent.dir))
      const context = yield* Layer.build(
        Recall.Default.pipe(
          Layer.provideMerge(RecallStoreSqlite.layer),
          Layer.provide(embedder),
          Layer.provide(KnownSecrets.layer),
          Layer.provide(Layer.succeedContext(base))
        )
      )
      const store = Context.get(context, RecallStore)
      const recall = Context.get(context, Recall)
      process.stderr.write(`  filling ${chunks} chunks × ${dimensions} dimensions…\n`)
      const started = performance.now()
      yield* fill(corpus).pipe(Effect.provide(context))
      process.stderr.write(`  filled in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
      const truthStarted = performance.now()
      const truths = groundTruth(corpus, queryVectors)
      process.stderr.write(`  exact float32 top ${limit} in ${((performance.now() - truthStarted) / 1000).toFixed(1)} s\n`)
      const samples: Array<number> = []
      const baseline: Array<number> = []
      const embeddings: Array<number> = []
      let overlap = 0
      let scanOverlap = 0
      let hits = 0
      const window = { afterMs: undefined, beforeMs: undefined }
      for (let j = 0; j < queries + 2; j++) {
        embedding.ms = 0
        const start = performance.now()
        const result = yield* recall.search({ query: corpus.queryText(j) })
        const ms = performance.now() - start - embedding.ms
        const scanStart = performance.now()
        const scan = yield* store.scanVectorSearch(queryVectors[j]!, limit)
        const scanMs = performance.now() - scanStart
        const fast = yield* store.vectorSearch(queryVectors[j]!, limit * candidatesPerHit, window)
        if (result.mode !== "hybrid") return yield* Effect.die(`the bench search ran in ${result.mode} mode`)
        // The first two warm the page cache and the statements.
        if (j < 2) continue
        samples.push(ms)
        baseline.push(scanMs)
        embeddings.push(embedding.ms)
        hits += result.hits.length
        const truth = truths[j]!
        overlap += fast.slice(0, limit).filter((r) => truth.has(r.id)).length
        scanOverlap += scan.filter((r) => truth.has(r.id)).length
      }
      const recallAt10 = overlap / (queries * limit)
      process.stderr.write(`  recall@10 against the exact float32 top 10: ${recallAt10.toFixed(3)}` +
        ` (the scan of the stored vectors: ${(scanOverlap / (queries * limit)).toFixed(3)}); ` +
        `${(hits / queries).toFixed(1)} hits a search\n`)
      return {
        samples,
        baseline,
        extra: { recallAt10, scanRecallAt10: scanOverlap / (queries * limit), embeddingMs: median(embeddings) }
      }
    })))
  } finally {
    agent.remove()
  }
}

/** The chunks of `fill`, without vectors (a server without pgvector keeps none), 1,000 a transaction. */
const fillText = (corpus: Corpus) =>
  Effect.gen(function*() {
    const store = yield* RecallStore
    for (let from = 1; from <= chunks; from += 1_000) {
      const ids = Array.from({ length: Math.min(1_000, chunks - from + 1) }, (_, k) => from + k)
      yield* store.addSessionChunks("bench", 0, ids.map((i) => ({
        source: "session" as const,
        sessionId: "bench",
        path: null,
        messageStart: i,
        messageEnd: i,
        startMs: i * 1000,
        endMs: i * 1000,
        text: corpus.textOf(i)
      })))
    }
  })

/**
 * The whole search (`Recall.search` at the shipped default limit) over the same 100,000 chunks on PostgreSQL 15 (a
 * throwaway server on loopback, kern's PostgreSQL store over @effect/sql-pg) against the same search on kern.db's
 * SQLite in the same run (the floor), alternating. This machine's server (Debian 12) has no pgvector, so the
 * PostgreSQL search is what a server without it gives: keywords (tsvector, GIN, ts_rank), the rows fetched, fusion;
 * the SQLite one is hybrid as shipped (extra `sqliteKeywordMs`: SQLite's keyword side alone, for the like-for-like
 * figure). The query's embedding is timed apart (extra `embeddingMs`).
 */
const searchPg100k = async () => {
  const agent = benchAgent(undefined)
  try {
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const corpus = makeCorpus()
      const { embedder, embedding } = queryEmbedder(corpus)
      const base = yield* Layer.build(storeLayer(agent.dir))
      const recallOn = (sql: Layer.Layer<SqlClient.SqlClient, unknown>) =>
        Layer.build(Recall.Default.pipe(
          Layer.provideMerge(RecallStoreForClient.layer),
          Layer.provide(embedder),
          Layer.provide(KnownSecrets.layer),
          Layer.provideMerge(sql),
          Layer.provide(Layer.succeedContext(base))
        ))
      const onSqlite = yield* recallOn(Layer.succeedContext(base))
      const pg = yield* startPostgres
      const pgClient = Layer.effectDiscard(recallMigration).pipe(Layer.provideMerge(PgClient.layer({
        url: pg.url,
        maxConnections: 4,
        transformResultNames: Str.snakeToCamel,
        transformQueryNames: Str.camelToSnake
      })))
      const onPostgres = yield* recallOn(pgClient)
      process.stderr.write(`  filling ${chunks} chunks × ${dimensions} dimensions in SQLite…\n`)
      let started = performance.now()
      yield* fill(corpus).pipe(Effect.provide(onSqlite))
      process.stderr.write(`  filled in ${((performance.now() - started) / 1000).toFixed(1)} s; ${chunks} chunks in PostgreSQL…\n`)
      started = performance.now()
      yield* fillText(corpus).pipe(Effect.provide(onPostgres))
      const sql = Context.get(onPostgres, SqlClient.SqlClient)
      yield* sql`ANALYZE recall_chunks`
      process.stderr.write(`  filled in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
      const sqliteRecall = Context.get(onSqlite, Recall)
      const sqliteStore = Context.get(onSqlite, RecallStore)
      const pgRecall = Context.get(onPostgres, Recall)
      const samples: Array<number> = []
      const baseline: Array<number> = []
      const sqliteKeyword: Array<number> = []
      const embeddings: Array<number> = []
      let pgHits = 0
      const window = { afterMs: undefined, beforeMs: undefined }
      for (let j = 0; j < queries + 2; j++) {
        embedding.ms = 0
        let start = performance.now()
        const lite = yield* sqliteRecall.search({ query: corpus.queryText(j) })
        const liteMs = performance.now() - start - embedding.ms
        embedding.ms = 0
        start = performance.now()
        const result = yield* pgRecall.search({ query: corpus.queryText(j) })
        const pgMs = performance.now() - start - embedding.ms
        start = performance.now()
        yield* sqliteStore.keywordSearch(corpus.queryText(j), 5 * keywordCandidatesPerHit, window)
        const keywordMs = performance.now() - start
        if (lite.mode !== "hybrid") return yield* Effect.die(`the SQLite search ran in ${lite.mode} mode`)
        if (result.mode !== "keyword") return yield* Effect.die(`the PostgreSQL search ran in ${result.mode} mode`)
        if (j < 2) continue
        samples.push(pgMs)
        baseline.push(liteMs)
        sqliteKeyword.push(keywordMs)
        embeddings.push(embedding.ms)
        pgHits += result.hits.length
      }
      process.stderr.write(`  ${(pgHits / queries).toFixed(1)} hits a PostgreSQL search\n`)
      return { samples, baseline, extra: { sqliteKeywordMs: median(sqliteKeyword), embeddingMs: median(embeddings) } }
    })))
  } finally {
    agent.remove()
  }
}

const indexedMessages = 20_000

/** The session file read whole and each line JSON.parsed: the floor any indexer of it pays. Messages per second. */
const readAndParse = (path: string): number => {
  const start = performance.now()
  let messages = 0
  for (const line of NodeFs.readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue
    if ((JSON.parse(line) as { readonly _tag?: string })._tag !== "session") messages++
  }
  return messages / ((performance.now() - start) / 1000)
}

const cpuMsOf = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000

/**
 * Messages indexed per second by a full pass over a 20,000-message session (read, store, chunk, vectors stored),
 * on a fresh kern.db each round, against the floor of reading the same file and JSON.parsing its lines, alternating.
 * The embedder answers in process; its calls are timed apart and left out of the rate (extra `embeddingSeconds`,
 * the median round's). The machine is shared: extra `cpuMessagesPerSecond` is the rate by this process's CPU time
 * (the embedder's CPU left out too), which other processes' load does not move.
 */
const indexThroughput = async () => {
  const samples: Array<number> = []
  const baseline: Array<number> = []
  const embeddingSeconds: Array<number> = []
  const cpuRates: Array<number> = []
  for (let round = 0; round < 3; round++) {
    const agent = benchAgent(indexedMessages)
    try {
      let embeddingMs = 0
      let embeddingCpuMs = 0
      const timed = Layer.effect(
        Embedder.Embedder,
        Effect.map(Embedder.Embedder, (inner) => ({
          ...inner,
          embed: (texts: ReadonlyArray<string>) =>
            Effect.suspend(() => {
              const start = performance.now()
              const cpu = process.cpuUsage()
              return Effect.ensuring(
                inner.embed(texts),
                Effect.sync(() => {
                  embeddingMs += performance.now() - start
                  embeddingCpuMs += cpuMsOf(process.cpuUsage(cpu))
                })
              )
            })
        }))
      ).pipe(Layer.provide(Embedder.layerTest({ dimensions: 256 })))
      const { rate, cpuRate } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const base = yield* Layer.build(storeLayer(agent.dir))
        const recallLayer = Recall.Default.pipe(
          Layer.provide(RecallStoreSqlite.layer),
          Layer.provide(timed),
          Layer.provide(KnownSecrets.layer),
          Layer.provide(Database.layer({ filename: NodePath.join(agent.dir, ".kern/kern.db") }))
        )
        const recall = Context.get(yield* Layer.build(recallLayer.pipe(Layer.provide(Layer.succeedContext(base)))), Recall)
        const cpu = process.cpuUsage()
        const start = performance.now()
        const messages = yield* recall.sync
        const seconds = (performance.now() - start - embeddingMs) / 1000
        const cpuSeconds = (cpuMsOf(process.cpuUsage(cpu)) - embeddingCpuMs) / 1000
        const stats = yield* recall.stats
        if (messages !== indexedMessages || stats.unembedded !== 0) {
          return yield* Effect.die(`indexed ${messages} messages, ${stats.unembedded} chunks without vectors`)
        }
        return { rate: messages / seconds, cpuRate: messages / cpuSeconds }
      })))
      samples.push(rate)
      cpuRates.push(cpuRate)
      embeddingSeconds.push(embeddingMs / 1000)
      baseline.push(readAndParse(agent.session!))
    } finally {
      agent.remove()
    }
  }
  return {
    samples,
    baseline,
    extra: { embeddingSeconds: median(embeddingSeconds), cpuMessagesPerSecond: median(cpuRates) }
  }
}

const sizedMessages = 8_000
const sizedDimensions = 1536

const TableBytes = Schema.Array(Schema.Struct({ name: Schema.String, bytes: Schema.Number }))

/**
 * kern.db's bytes per indexed message: a 8,000-message session (the bench's realistic cycle of question, tool call,
 * result, answer) indexed with 1,536-dimension vectors, the WAL checkpointed, the file's size over the messages.
 * The share of the vectors (the stored vectors and the binary prefilter) is printed from SQLite's dbstat.
 */
const bytesPerMessage = async () => {
  const agent = benchAgent(sizedMessages)
  try {
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const dbFile = NodePath.join(agent.dir, ".kern/kern.db")
      const base = yield* Layer.build(storeLayer(agent.dir))
      const recallLayer = Recall.Default.pipe(
        Layer.provide(RecallStoreSqlite.layer),
        Layer.provide(Embedder.layerTest({ dimensions: sizedDimensions })),
        Layer.provide(KnownSecrets.layer),
        Layer.provideMerge(Database.layer({ filename: dbFile }))
      )
      const context = yield* Layer.build(recallLayer.pipe(Layer.provide(Layer.succeedContext(base))))
      const recall = Context.get(context, Recall)
      const sql = Context.get(context, SqlClient.SqlClient)
      const messages = yield* recall.sync
      const stats = yield* recall.stats
      yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
      const tables = yield* sql`SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name`.pipe(
        Effect.flatMap(Schema.decodeUnknown(TableBytes))
      )
      const fileBytes = NodeFs.statSync(dbFile).size
      const vectorBytes = tables
        .filter((t) => t.name === "recall_vectors" || t.name.startsWith("recall_vec_"))
        .reduce((sum, t) => sum + t.bytes, 0)
      const perMessage = fileBytes / messages
      process.stderr.write(
        `  ${messages} messages, ${stats.chunks} chunks: kern.db ${fileBytes} bytes, ${perMessage.toFixed(0)} bytes/message, ` +
          `vectors ${(vectorBytes / messages).toFixed(0)} bytes/message (${((100 * vectorBytes) / fileBytes).toFixed(1)} %), ` +
          `${(vectorBytes / stats.chunks).toFixed(0)} bytes/chunk\n`
      )
      for (const t of [...tables].sort((a, b) => b.bytes - a.bytes).slice(0, 8)) {
        process.stderr.write(`    ${t.name}: ${(t.bytes / messages).toFixed(0)} bytes/message\n`)
      }
      return { samples: [perMessage] }
    })))
  } finally {
    agent.remove()
  }
}

const backfillMessages = 75_000
const overheadTurns = 10

/**
 * Wall time of a one-step turn while the recall backfill of a 75,000-message session runs in the same process,
 * against the same turn with the indexer idle (the baseline), alternating in the same run.
 */
const turnDuringBackfill = async () => {
  const server = await startModelServerProcess()
  const agent = benchAgent(1_000, { model: "bench-model", baseURL: server.baseURL, embeddingModel: false })
  writeSessionFixture(agent.dir, backfillMessages, "20200101-000000-000-0000")
  try {
    const layer = agentRuntimeLayer(agent.dir, { command: "kern bench", waitSeconds: 0 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-bench" })),
      Layer.provide(NodeContext.layer)
    )
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { session } = yield* openActiveSession()
      const queue = yield* MessageQueue
      const runner = yield* TurnRunner
      const recall = yield* Recall
      const turn = (i: number) =>
        Effect.gen(function*() {
          yield* queue.offer({ interface: "bench", channel: "bench", userId: "u", text: `turn ${i}` })
          const message = yield* queue.next
          const start = performance.now()
          const outcome = yield* runner.run({ message, session, emit: () => Effect.void })
          const ms = performance.now() - start
          yield* queue.endTurn("main")
          if (outcome.failure !== undefined) return yield* Effect.die(`the bench turn failed: ${outcome.failure.message}`)
          return ms
        })
      // Warm-up: the first turns load the tokenizer and compile the paths.
      for (let i = 0; i < 3; i++) yield* turn(i)
      const baseline: Array<number> = []
      const samples: Array<number> = []
      // Alternating: a turn with the indexer idle, then one beside a running backfill, started for that turn and
      // stopped after it so the next idle turn is idle. A stopped pass keeps the chunks it stored but reads the
      // session's unstored lines again, so every busy turn runs beside the read and store of the messages.
      for (let i = 0; i < overheadTurns; i++) {
        baseline.push(yield* turn(10 + 2 * i))
        const backfill = yield* Effect.fork(recall.backfill)
        yield* Effect.yieldNow()
        const ms = yield* turn(11 + 2 * i)
        if (Option.isSome(yield* Fiber.poll(backfill))) {
          return yield* Effect.die("the backfill ended before a turn ran beside it: the session is too short")
        }
        samples.push(ms)
        yield* Fiber.interrupt(backfill)
      }
      process.stderr.write(`  ${samples.length} turns beside the backfill, ${baseline.length} with the indexer idle\n`)
      return { samples, baseline }
    })).pipe(Effect.provide(layer)))
  } finally {
    server.child.kill()
    agent.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "recall.search.100k",
    unit: "ms",
    run: search100k,
    targets: [{ of: "median", atMost: 30 }, { of: "extra.recallAt10", atLeast: 0.95 }]
  },
  {
    name: "recall.search.pg.100k",
    unit: "ms",
    run: searchPg100k,
    targets: [{ of: "median", atMost: 30 }, { of: "ratio", atMost: 2 }]
  },
  {
    name: "recall.index.throughput",
    unit: "messages/s",
    higherIsBetter: true,
    run: indexThroughput,
    targets: [{ of: "median", atLeast: 5_000 }]
  },
  { name: "recall.db.bytes", unit: "bytes/message", run: bytesPerMessage },
  { name: "recall.turn.during-backfill", unit: "ms (turn wall time)", run: turnDuringBackfill }
]

