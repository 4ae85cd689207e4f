// What `kern status` reads from kern.db, in a module of its own: status imports it (and SQLite and the
// stores with it) only when kern.db holds something, so a folder without one never loads them.
import type { SqlClient } from "@effect/sql"
import { type Context, Effect, Layer, Option } from "effect"
import { AgentConfig, type LoadedConfig } from "../../config/AgentConfig.js"
import * as KnownSecrets from "../../config/KnownSecrets.js"
import * as SegmentStoreSql from "../../context/SegmentStoreSql.js"
import { storedSummarizerStatus } from "../../context/storedSummarizerStatus.js"
import { recallStatus } from "../../recall/status.js"
import { HeartbeatLog } from "../../runtime/HeartbeatLog.js"
import * as SessionIndex from "../../session/SessionIndex.js"
import { SessionStore } from "../../session/SessionStore.js"
import { usageTotals } from "../../session/usageTotals.js"
import { makeSpendLedger } from "../../model/SpendLedger.js"
import { JobStore } from "../../tools/JobStore.js"
import { ScheduleStore } from "../../tools/schedules/ScheduleStore.js"
import { SubAgentStore } from "../../tools/subagents/SubAgentStore.js"
import type { DatabaseTarget } from "../../config/database.js"
import { PairingStore } from "../../users/PairingStore.js"
import * as ReadDatabase from "../../storage/readDatabase.js"

/**
 * kern.db as the agent's database layer opens it (migrated; on PostgreSQL its schema), imported only
 * when it is used: status reads an SQLite kern.db that is up to date without it (ReadDatabase.layerToRead).
 */
const agentDatabase = (target: DatabaseTarget) =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("../../runtime/agentDatabase.js")), (module) => module.layerOf(target)))

/** kern.db for status's reads: an SQLite file read as it is when this kern can, else the agent's database layer. */
const databaseOf = (target: DatabaseTarget) =>
  target._tag === "sqlite"
    ? Layer.orElse(ReadDatabase.layerToRead(target.file), () => agentDatabase(target))
    : agentDatabase(target)

/** The summarizer's state kern.db keeps, with the newest session's messages (from the session index). */
const storedSummary = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    const sessions = yield* store.list
    const newest = Option.fromNullable(sessions[sessions.length - 1])
    return yield* storedSummarizerStatus(
      loaded.config,
      Option.map(newest, (session) => ({ id: session.id, messages: session.messages }))
    )
  }).pipe(
    Effect.provide(Layer.mergeAll(SegmentStoreSql.layer, SessionStore.Default.pipe(Layer.provide(SessionIndex.layer)))),
    Effect.provide(Layer.merge(Layer.succeed(AgentConfig, loaded), KnownSecrets.layerOf(loaded)))
  )

/** The stores status reads kern.db through, with the database they read. */
export type StoredStores = SqlClient.SqlClient | HeartbeatLog | ScheduleStore | JobStore | SubAgentStore | PairingStore

const stores = Layer.mergeAll(HeartbeatLog.Default, ScheduleStore.Default, JobStore.Default, SubAgentStore.Default, PairingStore.Default)

/**
 * The running agent's keep of the reads below that depend on nothing but kern.db's rows (usage, heartbeat, spend,
 * schedules, running work, pairings): each kept with kern.db's change counter (src/storage/changeCounter.ts) as it
 * stood before the read, and answered again while the counter has not moved (no commit by any connection or process
 * since). The counter is read before the read, so a commit made during it moves the counter past the kept value.
 */
export interface KeptReads {
  readonly counter: () => number
  readonly kept: Map<string, { readonly version: number; readonly of: string; readonly value: unknown }>
}

/** `read`, or its kept value while kern.db is unchanged; one value kept by `key`, for the argument `of` (a day). */
const keptWhileUnchanged = <A, E, R>(keep: KeptReads | undefined, key: string, of: string, read: Effect.Effect<A, E, R>) =>
  keep === undefined ? read : Effect.suspend(() => {
    const version = keep.counter()
    const kept = keep.kept.get(key)
    if (kept !== undefined && kept.version === version && kept.of === of) return Effect.succeed(kept.value as A)
    return Effect.tap(read, (value) => Effect.sync(() => keep.kept.set(key, { version, of, value })))
  })

/**
 * The reads of kern.db status makes, over one open of it and its stores, made by the first read that needs them and
 * closed with the scope; over `held` instead where the process already holds kern.db open with these stores (the
 * running agent's own connection and stores, built once rather than for every report).
 */
export const storedReads = (target: DatabaseTarget, held?: Context.Context<StoredStores>, keep?: KeptReads) =>
  Effect.map(
    held === undefined
      ? Effect.map(
        Layer.memoize(Layer.provideMerge(stores, databaseOf(target))),
        (layer) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, layer)
      )
      : Effect.succeed(<A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, held)),
    (withStores) => ({
      /** Usage totals, the heartbeat's state, the spend of `day` (the ledger's rows) and the schedules' summary. */
      usageAndHeartbeat: (day: string) =>
        keptWhileUnchanged(held === undefined ? undefined : keep, "usage", day, withStores(Effect.all([
          usageTotals,
          Effect.flatMap(HeartbeatLog, (log) => log.state),
          Effect.flatMap(makeSpendLedger, (ledger) => ledger.day(day)),
          Effect.flatMap(ScheduleStore, (store) => store.summary)
        ]))),
      /** The rows of the background jobs and the sub-agents still `running`. */
      running: keptWhileUnchanged(held === undefined ? undefined : keep, "running", "", withStores(Effect.all([
        Effect.flatMap(JobStore, (store) => store.running),
        Effect.flatMap(SubAgentStore, (store) => store.running)
      ]))),
      pairings: keptWhileUnchanged(held === undefined ? undefined : keep, "pairings", "", withStores(Effect.flatMap(PairingStore, (store) => store.list))),
      recall: (loaded: LoadedConfig, holderAlive: boolean) => withStores(recallStatus(loaded, holderAlive)),
      summary: (loaded: LoadedConfig) => withStores(storedSummary(loaded))
    })
  )
