import { FileSystem } from "@effect/platform"
import { Clock, Data, Effect, Layer, Option } from "effect"
import * as NodeFs from "node:fs"
import { loadConfig } from "../../config/AgentConfig.js"
import { agentPaths } from "../../config/paths.js"
import type { ProcessEnv } from "../../config/ProcessEnv.js"
import * as TelegramChannel from "../../channels/telegram/TelegramChannel.js"
import { firstHeartbeatDue } from "../../runtime/HeartbeatSchedule.js"
import { HeartbeatLog } from "../../runtime/HeartbeatLog.js"
import * as AgentDatabase from "../../runtime/agentDatabase.js"
import { Inbox, layerSql as inboxLayer } from "../../runtime/Inbox.js"
import { keptLive } from "../keptLive.js"
import { ScheduleStore } from "../../tools/schedules/ScheduleStore.js"

/** Where a passive agent's Telegram bot is polled from, and the offset its own channel would poll from. */
export interface TelegramWatch {
  readonly root: string
  readonly token: string
  readonly offset: Option.Option<number>
}

/** What wakes a passive agent, as its folder says while it sleeps. */
export interface PassiveRecord {
  /** When it must be woken (its earliest schedule, its heartbeat, or now for a message left in its inbox). */
  readonly dueMs: Option.Option<number>
  /** What is due then, for the host's log. */
  readonly why: string
  /** Its Telegram bot, when TELEGRAM_BOT_TOKEN is set for it. */
  readonly telegram: Option.Option<TelegramWatch>
  /**
   * Why it is kept live (keptLive.ts: Slack, whose Socket Mode reaches only a connected app; Telegram among several
   * runners, whose bot only its own channel polls): the host wakes it at once (on the runner the cluster holds it on)
   * and never passivates it; no shared poller watches its bot.
   */
  readonly keptLive: Option.Option<string>
  /**
   * Its kern.db is on PostgreSQL: what another process writes there (`kern schedule add` beside the host) changes no
   * file in its folder, so it is read again at a slower pace instead (wakeSources.ts).
   */
  readonly onServer: boolean
}

/** An agent folder that could not be read while passive: nothing wakes it but a message until it can be. */
export class PassiveReadFailed extends Data.TaggedError("PassiveReadFailed")<{
  readonly dir: string
  readonly message: string
}> {}

const earlier = (a: Option.Option<readonly [number, string]>, b: Option.Option<readonly [number, string]>) =>
  Option.isNone(a) ? b : Option.isNone(b) ? a : b.value[0] < a.value[0] ? b : a

/**
 * A passive agent's due time and Telegram offset, read the way its own runtime reads them (ScheduleStore.earliest,
 * HeartbeatLog.due with the Scheduler's start rule, the channel's stored offset), over one short open of its kern.db
 * (the file, or its schema on PostgreSQL), closed before this returns. A folder with no kern.db (never run) is not given one: the agent's first start
 * decides about it (it refuses a missing kern.db beside existing sessions).
 */
export const readPassive = (
  dir: string,
  /** A runner among several (its agents' due-now rule for Telegram, keptLive.ts). */
  clustered = false
): Effect.Effect<PassiveRecord, PassiveReadFailed, FileSystem.FileSystem | ProcessEnv> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const loaded = yield* loadConfig(dir)
    const nowMs = yield* Clock.currentTimeMillis
    const intervalMs = loaded.config.heartbeatInterval * 60_000
    const token = loaded.env["TELEGRAM_BOT_TOKEN"]?.trim() ?? ""
    const root = loaded.env["TELEGRAM_API_ROOT"]?.trim() || TelegramChannel.defaultApiRoot
    const target = yield* AgentDatabase.targetOf(loaded)
    const onServer = target._tag === "postgres"
    // On SQLite a folder without kern.db has nothing stored; on PostgreSQL the agent's schema is where it always is.
    const stored = onServer || (yield* fs.exists(loaded.paths.dbFile))
      ? yield* Effect.all({
        schedule: Effect.flatMap(ScheduleStore, (store) => store.earliest),
        heartbeat: Effect.flatMap(HeartbeatLog, (log) => log.due),
        waiting: Effect.flatMap(Inbox, (inbox) => inbox.size),
        offset: Effect.flatMap(Inbox, TelegramChannel.storedOffset)
      }).pipe(
        Effect.provide(Layer.mergeAll(ScheduleStore.Default, HeartbeatLog.Default, inboxLayer).pipe(
          Layer.provideMerge(AgentDatabase.layerOf(target))
        ))
      )
      : { schedule: Option.none<number>(), heartbeat: Option.none<number>(), waiting: 0, offset: Option.none<number>() }
    const heartbeat = intervalMs === 0
      ? Option.none<readonly [number, string]>()
      : Option.some([firstHeartbeatDue(stored.heartbeat, nowMs, intervalMs), "the heartbeat is due"] as const)
    const kept = keptLive(loaded.env, clustered)
    const due = [
      Option.map(kept, (why) => [nowMs, `kept live: ${why}`] as const),
      Option.map(stored.schedule, (ms) => [ms, "a schedule is due"] as const),
      heartbeat,
      stored.waiting > 0 ? Option.some([nowMs, `${stored.waiting} accepted message(s) wait in its inbox`] as const) : Option.none()
    ].reduce(earlier, Option.none())
    return {
      dueMs: Option.map(due, ([ms]) => ms),
      why: Option.match(due, { onNone: () => "", onSome: ([, why]) => why }),
      telegram: token === "" ? Option.none() : Option.some({ root, token, offset: stored.offset }),
      keptLive: kept,
      onServer
    }
  }).pipe(
    Effect.mapError((error) => new PassiveReadFailed({ dir, message: error.message })),
    Effect.withSpan("kern.host.readPassive")
  )

/**
 * What the folder's config, `.env` and kern.db look like on disk (sizes and times): a change means something wrote
 * them while the agent slept (`kern schedule add` beside the host, an edited config), and its record is read again.
 * Plain stat calls that return nothing for a missing file: through FileSystem.stat each missing `.env` or `-wal` was a
 * failure with its stack, and 100 passive agents looked at every 10 s cost 650 ms of CPU a minute (host.idle.passive).
 */
export const folderStamp = (dir: string): Effect.Effect<string> =>
  Effect.sync(() => {
    const paths = agentPaths(dir)
    return [paths.configFile, paths.envFile, paths.dbFile, `${paths.dbFile}-wal`].map((file) => {
      const info = NodeFs.statSync(file, { throwIfNoEntry: false })
      return info === undefined ? "-" : `${info.size}@${info.mtimeMs}`
    }).join(" ")
  })
