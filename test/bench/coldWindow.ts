import * as NodeFs from "node:fs"
import { PerformanceObserver, performance } from "node:perf_hooks"

/** CPU the main thread has run (ms), from Linux's schedstat; undefined where there is none (other threads left out). */
export const mainThreadMs = (): number | undefined => {
  try {
    return Number(NodeFs.readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1e6
  } catch {
    return undefined
  }
}

/** What one cold sample took, and where: its wall time, the main thread's CPU, and the collector's pauses within it. */
export interface ColdWindow {
  readonly ms: number
  /** The main thread's CPU (ms) over the sample; NaN where the system does not say. */
  readonly mainThreadMs: number
  /** The collector's pauses (ms) that began within the sample, and how many of them were full mark-compacts. */
  readonly gcMs: number
  readonly markCompacts: number
}

/**
 * Times `work` (wall, from its start to its end) and reports beside it the main thread's CPU and the collector's
 * pauses within it: where a cold sample's time went (a full mark-compact of the heap the bundle's import left lands
 * in whichever sample yields to the event loop; the main thread's CPU is steadier than the wall on a busy machine).
 * The schedstat reads and the observer sit outside the timed interval.
 */
export const timeColdWindow = async (work: () => Promise<unknown> | unknown): Promise<ColdWindow> => {
  const pauses: Array<{ readonly at: number; readonly ms: number; readonly full: boolean }> = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { readonly detail?: { readonly kind?: number } }).detail?.kind
      // PerformanceEntry's detail.kind: NODE_PERFORMANCE_GC_MAJOR (4) is a full mark-compact.
      pauses.push({ at: entry.startTime, ms: entry.duration, full: kind === 4 })
    }
  })
  observer.observe({ entryTypes: ["gc"] })
  const cpuStart = mainThreadMs()
  const start = performance.now()
  const pending = work()
  // A synchronous floor is timed without a turn of the event loop (the collector's tasks run between turns).
  if (pending instanceof Promise) await pending
  const end = performance.now()
  const cpuEnd = mainThreadMs()
  // The observer is told of a pause after it, on a later turn of the event loop.
  await new Promise((resolve) => setTimeout(resolve, 0))
  observer.disconnect()
  const within = pauses.filter((pause) => pause.at >= start && pause.at <= end)
  return {
    ms: end - start,
    mainThreadMs: cpuStart === undefined || cpuEnd === undefined ? Number.NaN : cpuEnd - cpuStart,
    gcMs: within.reduce((sum, pause) => sum + pause.ms, 0),
    markCompacts: within.filter((pause) => pause.full).length
  }
}
