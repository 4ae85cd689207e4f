import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Ref, Scope, TestClock } from "effect"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import * as HostAgents from "../../src/host/HostAgents.js"
import type { LiveAgent } from "../../src/host/liveAgent.js"
import * as MemoryReclaim from "../../src/host/memoryReclaim.js"
import { makeTempDir } from "../support/tempDir.js"

// kern serve gives back what passivated agents held: V8 collects only when JavaScript allocates, so an idle host kept
// the garbage of its last wakes (and its pages in RSS) for good. After passivations, once quiet, it collects.

/** A macrotask later: a WeakRef's target is kept until the job that made it has ended. */
const nextTask = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))

describe("the host's memory reclaim", () => {
  it.scoped("requests in a burst make one collection, once the quiet time has passed since the last", () =>
    Effect.gen(function*() {
      const collections = yield* Ref.make(0)
      const reclaim = yield* MemoryReclaim.make({ quiet: "5 seconds", collect: Ref.update(collections, (n) => n + 1) })
      yield* reclaim.request
      yield* TestClock.adjust("3 seconds")
      yield* reclaim.request
      yield* TestClock.adjust("3 seconds")
      // 6 s after the first request, 3 s after the last: not yet.
      expect(yield* Ref.get(collections)).toBe(0)
      yield* TestClock.adjust("2 seconds")
      expect(yield* Ref.get(collections)).toBe(1)
      yield* TestClock.adjust("1 minute")
      expect(yield* Ref.get(collections)).toBe(1)
      yield* reclaim.request
      yield* TestClock.adjust("5 seconds")
      expect(yield* Ref.get(collections)).toBe(2)
    }))

  it.live("the collector is V8's own, obtained without --expose-gc on the command line: garbage is gone after it", () =>
    Effect.gen(function*() {
      expect((globalThis as { gc?: unknown }).gc, "this test must run without --expose-gc").toBeUndefined()
      const collector = yield* MemoryReclaim.exposedCollector
      expect(Option.isSome(collector)).toBe(true)
      const ref = yield* Effect.sync(() => new WeakRef({ payload: "x".repeat(1_000_000) }))
      yield* nextTask
      // Nothing else has to allocate for it to go.
      Option.getOrThrow(collector)()
      yield* nextTask
      expect(ref.deref()).toBeUndefined()
    }))

  it.scoped("the registry asks for a collection after an agent is passivated, not while agents only stay live", () =>
    Effect.gen(function*() {
      const collections = yield* Ref.make(0)
      const closed = yield* Ref.make(0)
      const build = () =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          yield* Scope.addFinalizer(scope, Ref.update(closed, (n) => n + 1))
          return { app: Effect.die("no requests here") as unknown as LiveAgent["app"], activity: { busy: Effect.succeed(false), keptLive: Option.none() }, scope } satisfies LiveAgent
        })
      const agents = yield* HostAgents.make({
        idleSeconds: 1,
        live: { host: "127.0.0.1", port: 0, hostUrl: "http://127.0.0.1:0", report: () => Effect.void },
        build,
        reclaimMemory: Ref.update(collections, (n) => n + 1)
      })
      yield* agents.reconcile([{ name: "alpha", dir: makeTempDir() }])
      yield* agents.wake("alpha", "a test")
      yield* TestClock.adjust("500 millis")
      expect(yield* Ref.get(closed)).toBe(0)
      yield* TestClock.adjust("30 seconds")
      // Live and busy-free for a second, it was passivated; five quiet seconds later, the collection.
      expect(yield* Ref.get(closed)).toBe(1)
      expect(yield* Ref.get(collections)).toBe(1)
      yield* TestClock.adjust("1 minute")
      expect(yield* Ref.get(collections)).toBe(1)
    }).pipe(Effect.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {})))))
})
