import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, TestClock } from "effect"
import { waitAtMost } from "../../src/config/waitAtMost.js"
import { awaitSleeper } from "../model/clock.js"

describe("waitAtMost", () => {
  it.effect("bounds a wait inside an uninterruptible region (a finalizer), where Effect.timeout bounds nothing", () =>
    Effect.gen(function*() {
      const bounded = yield* Effect.fork(Effect.uninterruptible(waitAtMost(Effect.never, "30 seconds")))
      expect(yield* awaitSleeper).toBe(30_000)
      yield* TestClock.adjust("30 seconds")
      expect(yield* Fiber.join(bounded)).toEqual(Option.none())

      // What it replaces: the timeout fires, and still waits for the effect to end by itself.
      const unbounded = yield* Effect.fork(Effect.uninterruptible(Effect.timeoutOption(Effect.sleep("1 hour"), "30 seconds")))
      yield* TestClock.adjust("30 seconds")
      expect(Option.isNone(yield* Fiber.poll(unbounded))).toBe(true)
      yield* TestClock.adjust("1 hour")
      expect(yield* Fiber.join(unbounded)).toEqual(Option.none())
    }))

  it.effect("an effect that ends in time gives its result; its failure stays a failure", () =>
    Effect.gen(function*() {
      expect(yield* Effect.uninterruptible(waitAtMost(Effect.succeed(7), "1 second"))).toEqual(Option.some(7))
      expect(yield* Effect.flip(waitAtMost(Effect.fail("no"), "1 second"))).toBe("no")
    }))
})
