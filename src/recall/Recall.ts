import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Clock, Duration, Effect, Option, Ref, Schema } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { Tokenizer } from "../model/tokenizer.js"
import { Embedder, type EmbeddingError } from "./Embedder.js"
import { type AutoRecallOptions, autoRecallSearchLimit, selectAutoRecall, wantsAutoRecall } from "./autoRecall.js"
import { boundMs, isExcluded, reciprocalRankFusion } from "./fusion.js"
import { makeSkippedFiles } from "../storage/agentFiles.js"
import { yieldToEventLoop } from "../config/eventLoop.js"
import { type IndexProgress, indexFiles, indexSessions } from "./indexing.js"
import { keywordNote, notedBackfill, notedKeywordReason, readStats } from "./stats.js"
import { type ChunkRow, RecallStore, type RecallStoreError, type SessionFilter, type TimeWindow } from "./RecallStore.js"
import { confinedAudience } from "../kernel/Audience.js"
import type { RunContextData } from "../kernel/RunContext.js"
import { conversationOfSession } from "../session/conversationIds.js"
import { waitAtMost } from "../config/waitAtMost.js"
import {
  type LoadRequest,
  LoadResult,
  type RecallExclude,
  RecallHit,
  RecallMessage,
  type SearchRequest,
  SearchResult
} from "./schema.js"

/** Recall failed: the index could not be read or written, or a request named something that is not there. */
export class RecallError extends Schema.TaggedError<RecallError>()("RecallError", {
  reason: Schema.Literal("storage", "not_found", "off"),
  message: Schema.String
}) {}

export const defaultSearchLimit = 5
/**
 * Candidates the binary prefilter keeps per hit asked for, before exact rescoring. sqlite-vec's KNN costs more the
 * more it keeps (at 100,000 chunks of 1,536 dimensions about 14 ms CPU for 50, 22 ms for 100): 10 per hit keeps
 * recall@10 against the exact float32 top 10 at 0.996 on recall.search.100k's corpus (20 per hit gave the same).
 */
export const candidatesPerHit = 10
/** Keyword (BM25) candidates per hit asked for: FTS5 ranks every match whatever the limit, so a longer list is free. */
export const keywordCandidatesPerHit = 20

/**
 * How long a search waits for its query's embedding before it answers by keywords alone. Indexing rides out a
 * failing endpoint with the provider's retry schedule (about 7 s); a search someone (or a turn) waits on does not.
 */
export const queryEmbeddingWait = Duration.seconds(5)

/**
 * How long a one-shot chat, on its way out, waits to embed its own newest chunks. Its keyword index is written
 * already and a later run embeds what is left (newest first), so a failing or slow endpoint costs the person waiting
 * for their prompt this much at most, not the retry schedule's 7 s.
 */
export const oneShotEmbeddingWait = Duration.seconds(3)

/** Characters a load returns per page unless asked otherwise. */
export const defaultLoadChars = 20_000

/** Whose conversation a search or load serves: a run's context, or none (everything, as the operator sees it). */
export type RunAudience = Pick<RunContextData, "audience">

/** A search or load outside any conversation (the CLI, the HTTP API): it sees everything. */
const everyone: RunAudience = {}

const storage = (error: RecallStoreError | PlatformError) => new RecallError({ reason: "storage", message: error.message })

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * The recall index of one agent: incremental indexing of its sessions and knowledge/notes files, embeddings when a
 * model gives them, hybrid search (vectors + BM25, fused by RRF) and paged loads of past messages. Indexing passes
 * run one at a time; searching never waits for one.
 */
export class Recall extends Effect.Service<Recall>()("kern/recall/Recall", {
  dependencies: [Tokenizer.Default],
  effect: Effect.gen(function*() {
    const { config, paths } = yield* AgentConfig
    const { secrets } = yield* KnownSecrets
    const store = yield* RecallStore
    const embedder = yield* Embedder
    const fs = yield* FileSystem.FileSystem
    const tokenizer = yield* Tokenizer
    const onePass = yield* Effect.makeSemaphore(1)
    const backfilling = yield* Ref.make(false)
    // A file the door refuses is reported once, not at every pass.
    const skippedFiles = yield* makeSkippedFiles()
    /** Why vectors are not used, once the endpoint said so (404); none while they work or are untried. */
    // Another process (the running agent) may have learnt it.
    const notedReason = yield* notedKeywordReason(store, embedder.model).pipe(Effect.orElseSucceed(() => Option.none<string>()))
    // A database that keeps no vectors (PostgreSQL without pgvector): nothing is embedded, the store said why once.
    const keywordReason = yield* Ref.make<Option.Option<string>>(
      Option.isNone(embedder.model)
        ? Option.some(embedder.offReason)
        : Option.isSome(store.vectorsUnavailable)
        ? Option.some(store.vectorsUnavailable.value.reason)
        : notedReason
    )
    const lastEmbeddingError = yield* Ref.make<Option.Option<string>>(Option.none())

    const offline = (error: EmbeddingError) =>
      error.reason === "unsupported"
        ? Effect.zipRight(
          Ref.set(keywordReason, Option.some(error.message)),
          store.setNote("keyword_reason", keywordNote(embedder.model, error.message)).pipe(
            Effect.catchAll((e) => Effect.logWarning(`kern: ${e.message}`))
          )
        )
        : Effect.zipRight(
          Ref.set(lastEmbeddingError, Option.some(error.message)),
          Effect.logWarning(`kern: recall embeddings failed (keyword search still works): ${error.message}`)
        )

    /**
     * Embeds chunks that have no vector, 100 at a time. The first answer gives the dimension; a model or dimension
     * other than the stored one drops every vector, and the loop then embeds all chunks again from their text.
     */
    const embedPending = (options: { readonly batches?: number; readonly newestFirst?: boolean } = {}) => Effect.gen(function*() {
      if (Option.isNone(embedder.model) || Option.isSome(yield* Ref.get(keywordReason))) return
      const model = embedder.model.value
      let space = yield* store.vectorSpace
      // The stored vectors were made by another model: probe this one's dimension once and start over.
      if (Option.isSome(space) && space.value.model !== model) {
        const probe = yield* Effect.either(embedder.embed(["dimension probe"]))
        if (probe._tag === "Left") return yield* offline(probe.left)
        const fresh = { model, dimension: probe.right[0]?.length ?? 0 }
        yield* store.resetVectors(fresh)
        space = Option.some(fresh)
      }
      for (let batch = 0; batch < (options.batches ?? Infinity); batch++) {
        const rows = yield* store.unembedded(100, options.newestFirst)
        if (rows.length === 0) return
        const vectors = yield* Effect.either(embedder.embed(rows.map((row) => row.text)))
        if (vectors._tag === "Left") return yield* offline(vectors.left)
        yield* Ref.set(lastEmbeddingError, Option.none())
        const dimension = vectors.right[0]?.length ?? 0
        if (Option.isNone(space) || space.value.model !== model || space.value.dimension !== dimension) {
          const fresh = { model, dimension }
          // The vectors in hand are of the new space: kept; every other chunk is embedded again by the loop.
          yield* store.resetVectors(fresh)
          space = Option.some(fresh)
        }
        yield* store.putVectors(dimension, rows.map((row, i) => ({ id: row.id, vector: vectors.right[i]!, startMs: row.startMs, endMs: row.endMs })))
        yield* yieldToEventLoop
      }
    }).pipe(Effect.withSpan("kern.recall.embedPending"))

    const pass = (options: { readonly only?: string; readonly onProgress?: (p: IndexProgress) => Effect.Effect<void> }) =>
      onePass.withPermits(1)(Effect.gen(function*() {
        if (!config.recall) return 0
        const messages = yield* indexSessions(store, tokenizer.counter, secrets, paths.sessionsDir, options)
        if (options.only === undefined) yield* indexFiles(store, tokenizer.counter, secrets, paths.dir, skippedFiles)
        // A one-shot chat embeds its own newest chunks (one request, oneShotEmbeddingWait at most); a backlog is the
        // running agent's to embed. It runs in the chat's finalizer; cut anywhere, its vectors are written in one
        // transaction or not at all.
        yield* (options.only === undefined ? embedPending() : waitAtMost(embedPending({ batches: 1, newestFirst: true }), oneShotEmbeddingWait).pipe(
          Effect.tap(Option.match({
            onNone: () => Effect.logDebug(`recall: embedding took over ${Duration.format(oneShotEmbeddingWait)}; a later run embeds it`),
            onSome: () => Effect.void
          }))
        ))
        return messages
      })).pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.mapError(storage))

    /** Indexes everything new: appended session lines, changed files, chunks without vectors. */
    const sync = pass({}).pipe(Effect.withSpan("kern.recall.sync"))

    /** Indexes one session's new lines (a one-shot chat's own turn) and embeds what waits. */
    const syncSession = (sessionId: string) => pass({ only: sessionId }).pipe(Effect.withSpan("kern.recall.syncSession"))

    /**
     * The start-up pass over every session file, flagged in stats while it runs. A rebuild that never finished (a
     * `kern recall reindex` killed part-way) left a partial index that reading only what is new cannot complete: it
     * is done again from the start.
     */
    const backfill = Effect.acquireUseRelease(
      Effect.zipRight(Ref.set(backfilling, true), store.setNote("backfill", "running").pipe(Effect.mapError(storage))),
      () =>
        Effect.flatMap(store.note("rebuild").pipe(Effect.mapError(storage)), (rebuild) =>
          Option.isNone(rebuild) ? sync : Effect.zipRight(
            Effect.logWarning(`kern: recall: the index rebuild started ${rebuild.value} did not finish; rebuilding it`),
            reindex(() => Effect.void)
          )),
      () => Effect.zipRight(Ref.set(backfilling, false), Effect.ignoreLogged(store.setNote("backfill", undefined)))
    )

    /**
     * The sessions a run may search: every one for a run that sees everything (the operator's conversation, the CLI,
     * the HTTP API), else only its own conversation's (named by the session ids, conversationIds.ts), no files.
     */
    const sessionsSeenBy = (run: RunAudience): Effect.Effect<SessionFilter, RecallStoreError> => {
      const audience = confinedAudience(run)
      if (audience === undefined) return Effect.succeed(undefined)
      return Effect.map(store.sessionStates, (states) =>
        states.map((state) => state.sessionId).filter((id) => conversationOfSession(id) === audience.conversationId))
    }

    /** Hits for a query: `run` says whose conversation asks (seesEverything), and so which sessions are searched. */
    const search = (request: SearchRequest, run: RunAudience = everyone) =>
      Effect.gen(function*() {
        const limit = request.limit ?? defaultSearchLimit
        const window: TimeWindow = { afterMs: boundMs(request.after, "after"), beforeMs: boundMs(request.before, "before") }
        const exclude = request.exclude ?? []
        const candidates = limit * candidatesPerHit
        const sessions = yield* sessionsSeenBy(run)
        const keyword = yield* store.keywordSearch(request.query, limit * keywordCandidatesPerHit, window, sessions)
        const queryVector = Option.isSome(yield* Ref.get(keywordReason)) || request.query.trim() === ""
          ? Option.none()
          : Option.flatMap(
            Option.getRight(yield* Effect.either(embedder.embed([request.query]).pipe(Effect.timeout(queryEmbeddingWait)))),
            (vectors) => Option.fromNullable(vectors[0])
          )
        const space = yield* store.vectorSpace
        const usable = Option.filter(queryVector, (v) => Option.isSome(space) && space.value.dimension === v.length)
        const vector = Option.isSome(usable) ? yield* store.vectorSearch(usable.value, candidates, window, sessions) : []
        const rows = new Map<number, ChunkRow>(
          (yield* store.chunks([...new Set([...keyword, ...vector].map((r) => r.id))])).map((row) => [row.id, row])
        )
        const kept = (list: ReadonlyArray<{ readonly id: number }>) =>
          list.filter((r) => {
            const row = rows.get(r.id)
            return row !== undefined && !isExcluded(row, exclude)
          }).map((r) => r.id)
        const distance = new Map(vector.map((r) => [r.id, r.score]))
        const fused = reciprocalRankFusion([kept(vector), kept(keyword)]).slice(0, limit)
        const hits = fused.map(({ id, score }) => {
          const row = rows.get(id)!
          return new RecallHit({
            source: row.source,
            sessionId: row.sessionId,
            path: row.path,
            messageStart: row.messageStart,
            messageEnd: row.messageEnd,
            startedAt: iso(row.startMs),
            endedAt: iso(row.endMs),
            distance: distance.get(id) ?? null,
            score,
            text: row.text
          })
        })
        return new SearchResult({ query: request.query, mode: Option.isSome(usable) ? "hybrid" : "keyword", hits })
      }).pipe(Effect.mapError(storage), Effect.withSpan("kern.recall.search"))

    /**
     * Messages of a session in full, as many as fit in `maxChars` (at least one); the rest is the next page. A run
     * that does not see everything loads only its own conversation's sessions: any other is "not there" to it.
     */
    const load = (request: LoadRequest, run: RunAudience = everyone) =>
      Effect.gen(function*() {
        const maxChars = request.maxChars ?? defaultLoadChars
        const audience = confinedAudience(run)
        const seen = audience === undefined || conversationOfSession(request.sessionId) === audience.conversationId
        const rows = !seen ? [] : yield* store.messagesIn(request.sessionId, request.messageStart, request.messageEnd).pipe(
          Effect.mapError(storage)
        )
        if (rows.length === 0) {
          return yield* new RecallError({
            reason: "not_found",
            message: `no indexed messages ${request.messageStart}–${request.messageEnd} in session "${request.sessionId}"`
          })
        }
        const messages: Array<RecallMessage> = []
        let chars = 0
        for (const row of rows) {
          if (messages.length > 0 && chars + row.text.length > maxChars) break
          messages.push(new RecallMessage({ index: row.index, role: row.role, at: iso(row.atMs), text: row.text }))
          chars += row.text.length
        }
        return new LoadResult({
          sessionId: request.sessionId,
          messages,
          nextMessageStart: messages.length < rows.length ? rows[messages.length]!.index : null
        })
      }).pipe(Effect.withSpan("kern.recall.load"))

    /** The index's figures; `holderAlive`: another live process runs the agent (its noted backfill is real). */
    const statsWith = (holderAlive: boolean) =>
      Effect.gen(function*() {
        const here = yield* Ref.get(backfilling)
        return yield* readStats(store, {
          model: embedder.model,
          keywordReason: yield* Ref.get(keywordReason),
          lastError: yield* Ref.get(lastEmbeddingError),
          backfillRunning: here || (yield* notedBackfill(store, holderAlive))
        })
      }).pipe(Effect.mapError(storage))

    const stats = statsWith(false)

    /**
     * Forgets the whole index and builds it again from the session files, reporting progress. kern.db notes the
     * rebuild until it finishes, so one cut short is done again at the agent's next start (see backfill).
     */
    const reindex = (onProgress: (progress: IndexProgress) => Effect.Effect<void>): Effect.Effect<number, RecallError> =>
      Effect.gen(function*() {
        const started = new Date(yield* Clock.currentTimeMillis).toISOString()
        yield* store.setNote("rebuild", started).pipe(Effect.mapError(storage))
        const states = yield* store.sessionStates.pipe(Effect.mapError(storage))
        for (const state of states) yield* store.resetSession(state.sessionId).pipe(Effect.mapError(storage))
        const files = yield* store.fileHashes.pipe(Effect.mapError(storage))
        for (const path of files.keys()) yield* store.replaceFile(path, undefined, []).pipe(Effect.mapError(storage))
        // A reindex tries the embeddings again, whatever an earlier pass concluded.
        if (Option.isSome(embedder.model)) {
          yield* Ref.set(keywordReason, Option.map(store.vectorsUnavailable, (notice) => notice.reason))
          yield* store.setNote("keyword_reason", undefined).pipe(Effect.mapError(storage))
        }
        const messages = yield* pass({ onProgress })
        yield* store.setNote("rebuild", undefined).pipe(Effect.mapError(storage))
        return messages
      }).pipe(Effect.withSpan("kern.recall.reindex"))

    /**
     * What auto-recall adds to a turn (see autoRecall.ts), or undefined: nothing qualifies, the turn does not want
     * it, or recall failed (logged; a turn never fails for it).
     */
    const autoRecall = (
      options: AutoRecallOptions,
      query: string,
      inContext: ReadonlyArray<RecallExclude>,
      run: RunAudience = everyone
    ) =>
      !config.recall || !wantsAutoRecall(options, query)
        ? Effect.succeed(undefined)
        : Effect.gen(function*() {
          const result = yield* search({ query, limit: autoRecallSearchLimit, exclude: inContext }, run)
          return selectAutoRecall(options, query, result.hits, inContext, yield* tokenizer.counter)
        }).pipe(
          Effect.catchAll((error) => Effect.as(Effect.logWarning(`kern: auto-recall skipped: ${error.message}`), undefined)),
          Effect.withSpan("kern.recall.autoRecall")
        )

    return { enabled: config.recall, search, load, stats, statsWith, sync, syncSession, backfill, reindex, autoRecall } as const
  })
}) {}
