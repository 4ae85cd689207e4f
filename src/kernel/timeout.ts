import { type Duration, Effect, Exit, Fiber, Option, Ref } from "effect"

/**
 * `Effect.timeoutFail` without its race. The work runs in a child fiber; most tool calls finish within one
 * scheduler turn, and those need no timer at all. Otherwise a second fiber waits on the Clock and interrupts the
 * work, whose finalizers have run by the time the timeout is reported. Nothing waits for the timer to be torn
 * down. An interrupt of the caller interrupts the work and waits for it.
 */
export const timeoutFail = <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  duration: Duration.DurationInput,
  onTimeout: () => E2
): Effect.Effect<A, E | E2, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const worker = yield* Effect.fork(restore(self))
      // The forked work runs before this fiber resumes: what completes within that turn needs no timer.
      yield* Effect.yieldNow()
      const early = yield* Fiber.poll(worker)
      if (Option.isSome(early)) return yield* early.value
      const fired = yield* Ref.make(false)
      // Forked from the uninterruptible region, the timer must be made interruptible itself, or cancelling it would
      // wait for the whole duration.
      const timer = yield* Effect.fork(
        Effect.interruptible(
          Effect.zipRight(Effect.sleep(duration), Effect.zipRight(Ref.set(fired, true), Fiber.interrupt(worker)))
        )
      )
      const exit = yield* restore(Fiber.await(worker)).pipe(
        Effect.onInterrupt(() => Effect.zipRight(Fiber.interruptFork(timer), Fiber.interrupt(worker)))
      )
      if (Exit.isInterrupted(exit) && (yield* Ref.get(fired))) return yield* Effect.fail(onTimeout())
      // Ask the timer to stop without waiting for it.
      yield* Effect.fiberIdWith((id) => Effect.sync(() => timer.unsafeInterruptAsFork(id)))
      return yield* exit
    })
  )
