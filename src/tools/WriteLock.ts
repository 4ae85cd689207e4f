import { Effect } from "effect"

/**
 * One permit per workspace: write, edit and bash change the folder one at a time, so an edit never interleaves
 * with a command rewriting the same file.
 */
export class WriteLock extends Effect.Service<WriteLock>()("kern/tools/WriteLock", {
  effect: Effect.map(Effect.makeSemaphore(1), (semaphore) => ({
    withLock: <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => semaphore.withPermits(1)(self)
  }))
}) {}
