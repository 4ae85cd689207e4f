import { Clock, Effect, Option, Ref } from "effect"
import { EventLog, recordOrWarn } from "./EventLog.js"
import { DurableMemory } from "./DurableMemory.js"
import { entryId, isExpired, type MemoryEntry, MemoryError, type MemoryTierName, type PutOptions, validateValue } from "./MemoryEntry.js"

export interface MemoryTier {
  readonly tier: MemoryTierName
  /** Stores a JSON value; anything else is refused with a MemoryError naming what is wrong. */
  readonly put: (key: string, value: unknown, options?: PutOptions) => Effect.Effect<void, MemoryError>
  readonly get: (key: string) => Effect.Effect<Option.Option<unknown>, MemoryError>
  readonly getEntry: (key: string) => Effect.Effect<Option.Option<MemoryEntry>, MemoryError>
  /** True when the key existed (and had not expired). */
  readonly delete: (key: string) => Effect.Effect<boolean, MemoryError>
  readonly listKeys: Effect.Effect<ReadonlyArray<string>, MemoryError>
}

export interface SnapshotTier extends MemoryTier {
  readonly snapshot: Effect.Effect<Readonly<Record<string, unknown>>>
}

/** The three tiers of a run (seed 002): working (in-process), episodic (per trace, audited), durable (SQLite). */
export interface MemoryBundle {
  readonly traceId: string
  readonly sessionId: string
  readonly working: SnapshotTier
  readonly episodic: SnapshotTier
  readonly durable: MemoryTier
}

const makeEntry = (tier: MemoryTierName, key: string, value: unknown, options: PutOptions) =>
  Effect.map(Clock.currentTimeMillis, (now): MemoryEntry => ({
    key,
    value,
    tier,
    source: options.source ?? "",
    confidence: options.confidence ?? 1,
    createdAtMs: now,
    ttlS: options.ttlS ?? null,
    entryId: entryId(tier, key)
  }))

/** An in-process tier; `onPut` lets the episodic tier audit its writes. */
const inMemoryTier = (
  tier: MemoryTierName,
  onPut: (entry: MemoryEntry) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<SnapshotTier> =>
  Effect.map(Ref.make<ReadonlyMap<string, MemoryEntry>>(new Map()), (ref) => {
    const live = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Ref.updateAndGet(ref, (map) => new Map([...map].filter(([, entry]) => !isExpired(entry, now)))))
    const getEntry = (key: string) => Effect.map(live, (map) => Option.fromNullable(map.get(key)))
    return {
      tier,
      put: (key, value, options = {}) =>
        Effect.gen(function*() {
          yield* validateValue(tier, key, value)
          const entry = yield* makeEntry(tier, key, value, options)
          yield* Ref.update(ref, (map) => new Map([...map, [key, entry]]))
          yield* onPut(entry)
        }),
      get: (key) => Effect.map(getEntry(key), Option.map((entry) => entry.value)),
      getEntry,
      delete: (key) =>
        Effect.flatMap(live, () =>
          Ref.modify(ref, (map): readonly [boolean, ReadonlyMap<string, MemoryEntry>] => {
            if (!map.has(key)) return [false, map]
            const next = new Map(map)
            next.delete(key)
            return [true, next]
          })),
      listKeys: Effect.map(live, (map) => [...map.keys()].sort()),
      snapshot: Effect.map(live, (map) => Object.fromEntries([...map].map(([key, entry]) => [key, entry.value])))
    }
  })

export interface MemoryBundleOptions {
  readonly traceId: string
  readonly sessionId?: string
  /** The run the episodic writes are audited under (defaults to the trace). */
  readonly runId?: string
}

/** Builds a run's memory: fresh working and episodic tiers, the agent's durable store. */
export const makeMemoryBundle = (options: MemoryBundleOptions) =>
  Effect.gen(function*() {
    const eventLog = yield* EventLog
    const durable = yield* DurableMemory
    const audit = (entry: MemoryEntry) =>
      recordOrWarn(eventLog, {
        decisionKey: "kernel.memory.put",
        runId: options.runId ?? options.traceId,
        traceId: options.traceId,
        sessionId: options.sessionId ?? "",
        status: "ok",
        detail: JSON.stringify({ tier: entry.tier, key: entry.key, source: entry.source, entryId: entry.entryId })
      })
    const bundle: MemoryBundle = {
      traceId: options.traceId,
      sessionId: options.sessionId ?? "",
      working: yield* inMemoryTier("working"),
      episodic: yield* inMemoryTier("episodic", audit),
      durable
    }
    return bundle
  })

export { MemoryError }
