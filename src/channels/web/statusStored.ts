// What `kern status` reads from kern.db, in a module of its own: status imports it (and SQLite, sqlite-vec and the
// stores with it) only when kern.db holds something, so a folder without one never loads them.
import type { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
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
 * kern.db as the agent's database layer opens it (migrated, sqlite-vec loaded; on PostgreSQL its schema), imported only
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

/**
 * The reads of kern.db status makes, over one open of it, made by the first read that needs it and closed with the
 * scope; over `held` instead where the process already holds kern.db open (the running agent's own connection).
 */
export const storedReads = (target: DatabaseTarget, held?: Layer.Layer<SqlClient.SqlClient>) =>
  Effect.map(Layer.memoize(held ?? databaseOf(target)), (database) => ({
    /** Usage totals, the heartbeat's state, the spend of `day` (the ledger's rows) and the schedules' summary. */
    usageAndHeartbeat: (day: string) =>
      Effect.all([
        usageTotals,
        Effect.flatMap(HeartbeatLog, (log) => log.state),
        Effect.flatMap(makeSpendLedger, (ledger) => ledger.day(day)),
        Effect.flatMap(ScheduleStore, (store) => store.summary)
      ]).pipe(
        Effect.provide(Layer.merge(HeartbeatLog.Default, ScheduleStore.Default)),
        Effect.provide(database)
      ),
    /** The rows of the background jobs and the sub-agents still `running`. */
    running: Effect.all([
      Effect.flatMap(JobStore, (store) => store.running),
      Effect.flatMap(SubAgentStore, (store) => store.running)
    ]).pipe(
      Effect.provide(Layer.merge(JobStore.Default, SubAgentStore.Default)),
      Effect.provide(database)
    ),
    pairings: Effect.flatMap(PairingStore, (store) => store.list).pipe(
      Effect.provide(PairingStore.Default),
      Effect.provide(database)
    ),
    recall: (loaded: LoadedConfig, holderAlive: boolean) => recallStatus(loaded, holderAlive).pipe(Effect.provide(database)),
    summary: (loaded: LoadedConfig) => storedSummary(loaded).pipe(Effect.provide(database))
  }))
