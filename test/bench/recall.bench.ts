import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Fiber, Layer, Option, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as Embedder from "../../src/recall/Embedder.js"
import { Recall } from "../../src/recall/Recall.js"
import { RecallStore } from "../../src/recall/RecallStore.js"
import * as RecallStoreSqlite from "../../src/recall/RecallStoreSqlite.js"
import * as Database from "../../src/storage/Database.js"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { topicVectors } from "../support/seededNormals.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import type { Bench } from "./bench.js"
import { benchAgent, startModelServerProcess, storeLayer } from "./fixtures.js"

const dimensions = 1536
const chunks = 100_000
const clusters = 1_000
const queries = 50
const limit = 10

/** 1,000 topics; chunk i near topic i mod 1,000, query j near topic 37·j mod 1,000 (see topicVectors). */
const makeVectors = () => {
  const near = topicVectors(42, dimensions, clusters)
  return { chunk: (i: number) => near(i), query: (j: number) => near(j * 37) }
}

/** 100,000 chunks with vectors in one transaction, through the store (as the indexer writes them). */
const fill = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* RecallStore
  const vectors = makeVectors()
  yield* store.resetVectors({ model: "bench", dimension: dimensions })
  yield* Effect.gen(function*() {
    for (let i = 1; i <= chunks; i++) {
      yield* sql`INSERT INTO recall_chunks (id, source, session_id, path, message_start, message_end, start_ms, end_ms, text)
        VALUES (${i}, 'session', 'bench', NULL, ${i}, ${i}, ${i * 1000}, ${i * 1000}, 'chunk')`
    }
    const batch: Array<{ id: number; vector: Float32Array; startMs: number; endMs: number }> = []
    for (let i = 1; i <= chunks; i++) {
      batch.push({ id: i, vector: vectors.chunk(i), startMs: i * 1000, endMs: i * 1000 })
      if (batch.length === 1000) yield* store.putVectors(dimensions, batch.splice(0))
    }
  }).pipe(sql.withTransaction)
  return vectors
})

/**
 * The exact top `limit` of every query by float32 cosine over the corpus as generated (the store keeps int8
 * vectors, so the truth is computed here): the chunks are generated again, in the same order, from a fresh seed.
 */
const groundTruth = (queries: ReadonlyArray<Float32Array>): Array<Set<number>> => {
  const again = makeVectors()
  const best = queries.map(() => [] as Array<{ readonly id: number; readonly dot: number }>)
  for (let i = 1; i <= chunks; i++) {
    const v = again.chunk(i)
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
 * Vector search over 100,000 chunks of 1,536 dimensions: the binary-quantized prefilter (k = limit × 20) rescoring
 * the int8 vectors, against the scan of every stored vector for the same queries in the same run. Recall@10 of the
 * fast path against the exact float32 top 10 is printed (and must be ≥ 0.95, or the bench fails).
 */
const search100k = async () => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-recall-"))
  try {
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(
        RecallStoreSqlite.layer.pipe(Layer.provideMerge(Database.layer({ filename: NodePath.join(dir, "kern.db") })))
      )
      const store = Context.get(context, RecallStore)
      process.stderr.write(`  filling ${chunks} chunks × ${dimensions} dimensions…\n`)
      const started = performance.now()
      const vectors = yield* fill.pipe(Effect.provide(context))
      process.stderr.write(`  filled in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
      const queryVectors = Array.from({ length: queries + 2 }, (_, j) => vectors.query(j))
      const truthStarted = performance.now()
      const truths = groundTruth(queryVectors)
      process.stderr.write(`  exact float32 top ${limit} in ${((performance.now() - truthStarted) / 1000).toFixed(1)} s\n`)
      const samples: Array<number> = []
      const baseline: Array<number> = []
      let overlap = 0
      let scanOverlap = 0
      const window = { afterMs: undefined, beforeMs: undefined }
      for (let j = 0; j < queries + 2; j++) {
        const query = queryVectors[j]!
        const start = performance.now()
        const fast = yield* store.vectorSearch(query, limit * 20, window)
        const ms = performance.now() - start
        const scanStart = performance.now()
        const scan = yield* store.scanVectorSearch(query, limit)
        const scanMs = performance.now() - scanStart
        // The first two warm the page cache and the statements.
        if (j < 2) continue
        samples.push(ms)
        baseline.push(scanMs)
        const truth = truths[j]!
        overlap += fast.slice(0, limit).filter((r) => truth.has(r.id)).length
        scanOverlap += scan.filter((r) => truth.has(r.id)).length
      }
      const recallAt10 = overlap / (queries * limit)
      process.stderr.write(`  recall@10 against the exact float32 top 10: ${recallAt10.toFixed(3)}` +
        ` (the scan of the stored vectors: ${(scanOverlap / (queries * limit)).toFixed(3)})\n`)
      if (recallAt10 < 0.95) return yield* Effect.die(`recall@10 ${recallAt10} is under 0.95`)
      return { samples, baseline }
    })))
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

const indexedMessages = 20_000

/**
 * Messages indexed per second by a full pass over a 20,000-message session (read, store, chunk, embed with an
 * embedder answering at once, vectors stored), on a fresh kern.db each round.
 */
const indexThroughput = async () => {
  const samples: Array<number> = []
  for (let round = 0; round < 3; round++) {
    const agent = benchAgent(indexedMessages)
    try {
      const rate = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const base = yield* Layer.build(storeLayer(agent.dir))
        const recallLayer = Recall.Default.pipe(
          Layer.provide(RecallStoreSqlite.layer),
          Layer.provide(Embedder.layerTest({ dimensions: 256 })),
          Layer.provide(KnownSecrets.layer),
          Layer.provide(Database.layer({ filename: NodePath.join(agent.dir, ".kern/kern.db") }))
        )
        const recall = Context.get(yield* Layer.build(recallLayer.pipe(Layer.provide(Layer.succeedContext(base)))), Recall)
        const start = performance.now()
        const messages = yield* recall.sync
        const seconds = (performance.now() - start) / 1000
        const stats = yield* recall.stats
        if (messages !== indexedMessages || stats.unembedded !== 0) {
          return yield* Effect.die(`indexed ${messages} messages, ${stats.unembedded} chunks without vectors`)
        }
        return messages / seconds
      })))
      samples.push(rate)
    } finally {
      agent.remove()
    }
  }
  return { samples }
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
 * against the same turn with the indexer idle (the baseline, measured first in the same run).
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
      const baseline: Array<number> = []
      for (let i = 0; i < overheadTurns + 3; i++) {
        const ms = yield* turn(i)
        if (i >= 3) baseline.push(ms)
      }
      const backfill = yield* Effect.fork(recall.backfill)
      yield* Effect.yieldNow()
      const samples: Array<number> = []
      for (let i = 0; samples.length < overheadTurns; i++) {
        if (Option.isSome(yield* Fiber.poll(backfill))) break
        samples.push(yield* turn(100 + i))
      }
      const indexed = yield* backfill.await
      process.stderr.write(`  ${samples.length} turns during the backfill (${JSON.stringify(indexed._tag)})\n`)
      if (samples.length < 3) return yield* Effect.die("the backfill ended before three turns ran beside it")
      return { samples, baseline }
    })).pipe(Effect.provide(layer)))
  } finally {
    server.child.kill()
    agent.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  { name: "recall.search.100k", unit: "ms", run: search100k },
  { name: "recall.index.throughput", unit: "messages/s", run: indexThroughput },
  { name: "recall.db.bytes", unit: "bytes/message", run: bytesPerMessage },
  { name: "recall.turn.during-backfill", unit: "ms (turn wall time)", run: turnDuringBackfill }
]

