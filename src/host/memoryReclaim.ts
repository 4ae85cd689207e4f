import { Duration, Effect, Option, Queue, Stream } from "effect"
import * as NodeV8 from "node:v8"
import * as NodeVm from "node:vm"

/**
 * A host gives back the memory of the agents it passivated. A live agent holds a few MB of objects (its layers,
 * fibers, caches); passivated, it leaves about 100 KB (its record). But V8 collects only when JavaScript allocates, and
 * an idle host hardly does: after a burst of wakes the freed objects stayed on the heap, and its pages in the process's
 * RSS, for as long as the host stayed quiet (100 agents woken ten at a time and passivated left a host of 650 MB, a
 * tenth of it in use). So once agents have been passivated and the host has been quiet for a moment, it runs two full
 * collections (the second finds the first's sweeping done and returns the emptied pages): one pause of tens of ms,
 * at most once per quiet period, never while agents are being woken or passivated in a burst.
 */

/**
 * V8's full collection as `node --expose-gc` offers it, obtained at run time (the flag set, then the function read in
 * a new context, where V8 installs it); none if the runtime refuses.
 */
export const exposedCollector: Effect.Effect<Option.Option<() => void>> = Effect.sync(() => {
  try {
    NodeV8.setFlagsFromString("--expose-gc")
    const collect: unknown = NodeVm.runInNewContext("gc")
    return typeof collect === "function" ? Option.some(() => void collect()) : Option.none()
  } catch {
    return Option.none()
  }
})

export interface MemoryReclaim {
  /** Says that memory may have been freed (an agent passivated or removed); the collection follows once quiet. */
  readonly request: Effect.Effect<void>
}

export interface MemoryReclaimOptions {
  /** How long after the last request the collection runs (each request meanwhile starts the wait over). */
  readonly quiet: Duration.DurationInput
  /** The collection; two full collections through exposedCollector by default (nothing if there is none). */
  readonly collect?: Effect.Effect<void> | undefined
}

/** The reclaimer, its one fiber running until the scope closes. */
export const make = (options: MemoryReclaimOptions) =>
  Effect.gen(function*() {
    const collect = options.collect ?? Option.match(yield* exposedCollector, {
      onNone: () => Effect.void,
      onSome: (gc) =>
        Effect.sync(() => {
          gc()
          gc()
        })
    })
    const requests = yield* Queue.sliding<void>(1)
    yield* Stream.fromQueue(requests).pipe(
      Stream.debounce(Duration.decode(options.quiet)),
      Stream.runForEach(() => collect.pipe(Effect.withSpan("kern.host.reclaimMemory"))),
      Effect.forkScoped
    )
    return { request: Effect.asVoid(Queue.offer(requests, undefined)) } satisfies MemoryReclaim
  })
