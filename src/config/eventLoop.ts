import { Effect } from "effect"

/**
 * Lets Node run what is waiting (a turn's socket reads, timers, a SIGTERM's handler) between two synchronous
 * stretches of work: SQLite, a session file read and parsed a chunk at a time. `Effect.yieldNow` only lets other
 * fibers run, in a microtask: I/O callbacks and signals would wait for the whole stretch. The fiber can be interrupted
 * here.
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})
