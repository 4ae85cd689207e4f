import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option, TestClock } from "effect"
import { timeoutFail } from "../../src/kernel/timeout.js"

describe("timeoutFail", () => {
  // Under the TestClock the timer never fires on its own: these return only because nothing waits for it.
  it.effect("returns the work's value or failure when it finishes first, without waiting for the timer", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* timeoutFail(Effect.succeed(1), "1 second", () => "late"), 1)
      assert.strictEqual(yield* Effect.flip(timeoutFail(Effect.fail("boom"), "1 second", () => "late")), "boom")
    }))

  it.effect("fails with onTimeout after the duration on the Clock, after the work's finalizers ran", () =>
    Effect.gen(function*() {
      const finalized = yield* Deferred.make<void>()
      const work = Effect.zipRight(Effect.addFinalizer(() => Deferred.succeed(finalized, undefined)), Effect.never).pipe(
        Effect.scoped
      )
      const fiber = yield* Effect.fork(timeoutFail(work, "2 seconds", () => "late"))
      yield* TestClock.adjust("1999 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.await(fiber)
      assert.deepStrictEqual(exit, Exit.fail("late"))
      assert.isTrue(yield* Deferred.isDone(finalized))
    }))

  it.effect("interrupting the caller interrupts the work and waits for its finalizers", () =>
    Effect.gen(function*() {
      const finalized = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const work = Effect.zipRight(
        Effect.zipRight(Effect.addFinalizer(() => Deferred.succeed(finalized, undefined)), Deferred.succeed(started, undefined)),
        Effect.never
      ).pipe(Effect.scoped)
      const fiber = yield* Effect.fork(timeoutFail(work, "1 hour", () => "late"))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Deferred.isDone(finalized))
    }))
})
