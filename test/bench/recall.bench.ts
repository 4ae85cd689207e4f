import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Fiber, Layer, Option } from "effect"
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
import { MessageQueue } from "../../src/agent/MessageQueue.js"
import { openActiveSession } from "../../src/agent/activeSession.js"
import { TurnRunner } from "../../src/agent/TurnRunner.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import type { Bench } from "./bench.js"
import { benchAgent, startModelServerProcess, storeLayer } from "./fixtures.js"

const dimensions = 1536
const chunks = 100_000
const clusters = 1_000
const queries = 50
const limit = 10

/** A deterministic generator (mulberry32) and standard normals from it (Box–Muller). */
const generator = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return () => Math.sqrt(-2 * Math.log(next() || 1e-12)) * Math.cos(2 * Math.PI * next())
}

const normalized = (v: Float32Array) => {
  let norm = 0
  for (const x of v) norm += x * x
  norm = Math.sqrt(norm)
  for (let i = 0; i < v.length; i++) v[i]! /= norm
  return v
}

/**
 * Vectors shaped like embeddings of real text: 1,000 topics (random directions), each chunk its topic plus noise
 * of comparable size (cosine ~0.8 within a topic, ~0 across), queries likewise near a topic. Uniform random
 * vectors would be unlike any embedding model's output: every point equally far from every other.
 */
const makeVectors = () => {
  const gauss = generator(42)
  const centers = Array.from({ length: clusters }, () => Float32Array.from({ length: dimensions }, gauss))
  const near = (center: Float32Array) => normalized(Float32Array.from(center, (x) => x + 0.5 * gauss()))
  return {
    chunk: (i: number) => near(centers[i % clusters]!),
    query: (j: number) => near(centers[(j * 37) % clusters]!)
  }
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
 * Vector search over 100,000 chunks of 1,536 dimensions: the binary-quantized prefilter (k = limit × 20) with exact
 * float rescoring, against the exact float scan of the same queries in the same run. Recall@10 of the fast path
 * against the scan is printed (and must be ≥ 0.95, or the bench fails).
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
      const samples: Array<number> = []
      const baseline: Array<number> = []
      let overlap = 0
      const window = { afterMs: undefined, beforeMs: undefined }
      for (let j = 0; j < queries + 2; j++) {
        const query = vectors.query(j)
        const start = performance.now()
        const fast = yield* store.vectorSearch(query, limit * 20, window)
        const ms = performance.now() - start
        const scanStart = performance.now()
        const exact = yield* store.exactVectorSearch(query, limit)
        const scanMs = performance.now() - scanStart
        // The first two warm the page cache and the statements.
        if (j < 2) continue
        samples.push(ms)
        baseline.push(scanMs)
        const truth = new Set(exact.map((r) => r.id))
        overlap += fast.slice(0, limit).filter((r) => truth.has(r.id)).length
      }
      const recallAt10 = overlap / (queries * limit)
      process.stderr.write(`  recall@10 against the exact scan: ${recallAt10.toFixed(3)}\n`)
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
          yield* queue.endTurn
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
  { name: "recall.turn.during-backfill", unit: "ms (turn wall time)", run: turnDuringBackfill }
]

