import { FileSystem, HttpClient } from "@effect/platform"
import { Clock, Context, Duration, Effect, Equal, HashMap, Layer, Option, Ref, Stream } from "effect"
import { ProcessEnv } from "../../config/ProcessEnv.js"
import { makeDueTimes } from "./DueTimes.js"
import type { AgentInfo } from "../AgentHandle.js"
import { HostAgents } from "../HostAgents.js"
import { folderStamp, type PassiveRecord, readPassive, type TelegramWatch } from "./passiveRead.js"
import { makeTelegramWakes } from "./TelegramWakes.js"

/**
 * How often the passive agents' folders are looked at (a stat of four files each) for what another process wrote
 * while they sleep: `kern schedule add` beside the host, an edited config or `.env`. The agent's own Scheduler polls
 * kern.db at the same interval while it runs (Scheduler.schedulePollInterval).
 */
export const recheckInterval = Duration.seconds(10)

/** Agents whose kern.db is on PostgreSQL are read again every this many looks (a minute): one query each. */
export const serverRecheckLooks = 6

/** What the wake sources watch now: for the host's status, and for tests to see them settled. */
export interface WakeSourcesStatus {
  /** Passive agents read and watched. */
  readonly passive: number
  /** Those with a due time, and the earliest. */
  readonly due: number
  readonly nextDueMs: Option.Option<number>
  /** Bot tokens polled for passive agents (one fiber each). */
  readonly telegramPollers: number
}

/**
 * Among several runners (hostCluster.ts): whether this runner holds the agent's shard now, asked of the cluster in
 * memory (no query, no message). A kept-live agent is woken only by the runner holding its shard, when it comes to hold
 * it (at the start, or taken over from a runner that died or left); the others leave it alone, never asking the
 * cluster over and over for an agent live elsewhere. Absent on a single `kern serve`.
 */
export class RunnerShards extends Context.Tag("kern/host/RunnerShards")<RunnerShards, {
  readonly holdsHere: (name: string) => boolean
}>() {}

/** How often, among several runners, the wake sources look whether this runner came to hold a kept-live agent. */
export const shardLookInterval = Duration.seconds(1)

export class WakeSources extends Context.Tag("kern/host/WakeSources")<WakeSources, {
  readonly status: Effect.Effect<WakeSourcesStatus>
}>() {}

interface Asleep {
  readonly dir: string
  readonly stamp: string
  /** Its kern.db is on PostgreSQL: read again every `serverRecheckLooks` looks, whatever its folder says. */
  readonly onServer: boolean
  readonly telegram: Option.Option<TelegramWatch>
  /** Why it is kept live (keptLive.ts), with its due time and why when held here. */
  readonly keptLive: Option.Option<{ readonly dueMs: Option.Option<number>; readonly why: string }>
  /** Among several runners: whether this runner held its shard when last looked at (a kept-live agent is due only then). */
  readonly heldHere: boolean
}

const sameWatch = (a: Option.Option<TelegramWatch>, b: Option.Option<TelegramWatch>) =>
  Option.isNone(a) ? Option.isNone(b) : Option.isSome(b) && a.value.root === b.value.root && a.value.token === b.value.token &&
    Equal.equals(a.value.offset, b.value.offset)

/**
 * What wakes a passive hosted agent besides a message to it: its due time (schedules and heartbeat) and its Telegram
 * bot, for every passive agent of the host, from a handful of host fibers (one timer, one per bot token, one for the
 * host's changes and one looking at the folders), none per agent. When an agent turns passive its kern.db is read once
 * (then closed) for its due time and Telegram offset; when it wakes, its own Scheduler and channel take over and this
 * forgets it. Needs the host (HostAgents), a FileSystem, the process environment (ProcessEnv, under each agent's `.env`)
 * and an HttpClient for Telegram.
 */
export const layerWith = (options: {
  /** How often the passive folders are looked at (recheckInterval; a test looks more often). */
  readonly recheckInterval?: Duration.DurationInput | undefined
}): Layer.Layer<WakeSources, never, HostAgents | FileSystem.FileSystem | ProcessEnv | HttpClient.HttpClient> => Layer.scoped(
  WakeSources,
  Effect.gen(function*() {
    const host = yield* HostAgents
    const context = yield* Effect.context<FileSystem.FileSystem | ProcessEnv>()
    const shards = yield* Effect.serviceOption(RunnerShards)
    const clustered = Option.isSome(shards)
    const holdsHere = (name: string) => Option.match(shards, { onNone: () => true, onSome: (s) => s.holdsHere(name) })
    const dues = yield* makeDueTimes(host.wake)
    const telegram = yield* makeTelegramWakes(host.wake)
    /** The passive agents as last read; every change to it and to the sources goes through `lock`. */
    const asleep = yield* Ref.make(HashMap.empty<string, Asleep>())
    const lock = yield* Effect.makeSemaphore(1)

    const read = (dir: string) =>
      readPassive(dir, clustered).pipe(
        Effect.catchAll((error) =>
          Effect.as(
            Effect.logWarning(`kern: host: could not read ${dir} while it sleeps (${error.message}); only a message wakes it`),
            { dueMs: Option.none(), why: "", telegram: Option.none(), keptLive: Option.none(), onServer: false } satisfies PassiveRecord
          )
        ),
        Effect.provide(context)
      )

    /** An agent turned passive (or its folder changed while passive): read, then its due time and bot watched. */
    const fallAsleep = (agent: Pick<AgentInfo, "name" | "dir">) =>
      Effect.gen(function*() {
        const record = yield* read(agent.dir)
        const stamp = yield* folderStamp(agent.dir)
        const before = HashMap.get(yield* Ref.get(asleep), agent.name)
        // A kept-live agent's own channels do everything once it is live: no shared poller watches its bot; among
        // several runners it is due only on the runner holding its shard (the others would wake it there, or loop).
        const kept = Option.isSome(record.keptLive)
        const watched = kept ? Option.none<TelegramWatch>() : record.telegram
        const heldHere = holdsHere(agent.name)
        yield* Ref.update(asleep, HashMap.set(agent.name, {
          dir: agent.dir,
          stamp,
          onServer: record.onServer,
          telegram: watched,
          keptLive: kept ? Option.some({ dueMs: record.dueMs, why: record.why }) : Option.none(),
          heldHere
        }))
        yield* dues.set(agent.name, kept && !heldHere ? Option.none() : record.dueMs, record.why)
        if (Option.isSome(before) && sameWatch(before.value.telegram, watched)) return
        yield* Option.match(watched, {
          onNone: () => telegram.release(agent.name),
          onSome: (watch) => telegram.watch(agent.name, watch)
        })
      })

    /** Waking, live or gone: its own Scheduler and channels run (or nothing does); nothing here for it. */
    const wakeUp = (name: string) =>
      Effect.gen(function*() {
        yield* Ref.update(asleep, HashMap.remove(name))
        yield* dues.clear(name)
        yield* telegram.release(name)
      })

    const follow = Stream.runForEach(host.changes, (agent) =>
      lock.withPermits(1)(agent.state === "passive" ? fallAsleep(agent) : wakeUp(agent.name)))

    /**
     * A folder of a passive agent that changed on disk is read again (under the lock, if it is still passive); one whose
     * kern.db is on PostgreSQL also every `serverRecheckLooks` looks (a minute), since what is written there touches no file.
     */
    const looks = yield* Ref.make(0)
    const recheck = Effect.gen(function*() {
      const look = yield* Ref.updateAndGet(looks, (n) => n + 1)
      for (const [name, known] of yield* Ref.get(asleep)) {
        const stamp = yield* folderStamp(known.dir)
        if (stamp === known.stamp && !(known.onServer && look % serverRecheckLooks === 0)) continue
        yield* lock.withPermits(1)(Effect.flatMap(Ref.get(asleep), (now) =>
          Option.match(HashMap.get(now, name), {
            onNone: () => Effect.void,
            onSome: (still) => fallAsleep({ name, dir: still.dir })
          })
        ))
      }
    })
    // The folders are looked at on the real clock, as the Scheduler polls kern.db: other processes write in real time,
    // and a test's simulated hours then cost no look every 10 s (the due times themselves are on the Clock).
    const looking = Effect.forever(Effect.zipRight(Effect.sleep(options.recheckInterval ?? recheckInterval).pipe(Effect.withClock(Clock.make())), recheck))

    /**
     * Among several runners: a passive kept-live agent whose shard this runner came to hold (the cluster gave it here:
     * its runner died or left, or the runners started) is due now, and one whose shard went elsewhere is not due here.
     * Only a change is acted on, so an agent live on another runner costs a look in memory, never a call to the cluster.
     */
    const lookAtShards = lock.withPermits(1)(Effect.gen(function*() {
      for (const [name, known] of yield* Ref.get(asleep)) {
        if (Option.isNone(known.keptLive)) continue
        const heldHere = holdsHere(name)
        if (heldHere === known.heldHere) continue
        yield* Ref.update(asleep, HashMap.set(name, { ...known, heldHere }))
        if (heldHere) yield* Effect.logInfo(`kern serve: this runner now holds kept-live agent ${name}; waking it`)
        yield* dues.set(name, heldHere ? known.keptLive.value.dueMs : Option.none(), known.keptLive.value.why)
      }
    }))
    if (clustered) {
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(shardLookInterval).pipe(Effect.withClock(Clock.make())), lookAtShards)))
    }

    yield* Effect.forkScoped(dues.run)
    yield* Effect.forkScoped(follow)
    yield* Effect.forkScoped(looking)

    return {
      status: Effect.gen(function*() {
        const due = yield* dues.status
        return { passive: HashMap.size(yield* Ref.get(asleep)), due: due.count, nextDueMs: due.nextDueMs, telegramPollers: yield* telegram.polling }
      })
    }
  })
)

export const layer: Layer.Layer<WakeSources, never, HostAgents | FileSystem.FileSystem | ProcessEnv | HttpClient.HttpClient> = layerWith({})
