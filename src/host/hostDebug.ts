import { Effect } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"

/**
 * A diagnostic of `kern serve`, for benchmarks and for looking into a slow or growing host: with `KERN_DEBUG_HOST=1` in
 * its environment, the host samples its event loop's delay (perf_hooks' histogram, a timer every 10 ms) and `GET /host`
 * carries `debug`: the delay since the previous read, V8's heap in use, and the resources keeping the process alive by kind (timers,
 * sockets, file watchers), which an idle agent must not add to. Off by default: the timer would cost an idle host CPU
 * every second for figures nobody reads.
 */
export const debugVariable = "KERN_DEBUG_HOST"

/** Delays in ms since the previous read (or since the host started). */
export interface EventLoopFigures {
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly samples: number
}

export interface HostDebugFigures {
  readonly eventLoopDelayMs: EventLoopFigures
  /** process.getActiveResourcesInfo(), counted by kind: `Timeout`, `TCPSocketWrap`, `FSEventWrap`, … */
  readonly activeResources: Readonly<Record<string, number>>
  /** V8's heap in use (after a full collection when the host runs under `node --expose-gc`). */
  readonly heapUsedBytes: number
  /**
   * Where the rest of the process's memory is: V8's heap as reserved (heapTotal: it grows for a burst and is given
   * back slowly), memory outside it held by JavaScript objects (external, arrayBuffers: Buffers, SQLite rows in transit).
   */
  readonly heapTotalBytes: number
  readonly externalBytes: number
  readonly arrayBuffersBytes: number
}

export interface HostDebug {
  /** The figures now; the event loop's histogram starts over. */
  readonly take: Effect.Effect<HostDebugFigures>
}

const ms = (ns: number) => Math.round(ns / 1e4) / 100

const countByKind = (kinds: ReadonlyArray<string>) => {
  const counts: Record<string, number> = {}
  for (const kind of kinds) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}

/** The histogram, enabled until the scope closes. */
export const make = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => {
      const histogram = monitorEventLoopDelay({ resolution: 10 })
      histogram.enable()
      return histogram
    }),
    (histogram) => Effect.sync(() => histogram.disable())
  ),
  (histogram): HostDebug => ({
    take: Effect.sync(() => {
      const eventLoopDelayMs = histogram.count === 0
        ? { p50: 0, p99: 0, max: 0, samples: 0 }
        : { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), samples: histogram.count }
      histogram.reset()
      // Under `node --expose-gc` (NODE_OPTIONS), a full collection first: the heap figure is then what is still held.
      const collect = (globalThis as { gc?: () => void }).gc
      if (collect !== undefined) collect()
      const memory = process.memoryUsage()
      return {
        eventLoopDelayMs,
        activeResources: countByKind(process.getActiveResourcesInfo()),
        heapUsedBytes: memory.heapUsed,
        heapTotalBytes: memory.heapTotal,
        externalBytes: memory.external,
        arrayBuffersBytes: memory.arrayBuffers
      }
    })
  })
)
