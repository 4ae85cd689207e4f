import { Chunk, Clock, Effect, TestClock, TestServices } from "effect"

/**
 * Waits until some fiber sleeps on the TestClock (a retry waiting out its delay) and returns how long it will
 * sleep, in ms. The request before it runs on real sockets, so this polls on the live clock; it asserts
 * nothing about time.
 */
export const awaitSleeper: Effect.Effect<number> = Effect.suspend(() => awaitSleeperWithin(Number.POSITIVE_INFINITY))

/**
 * Waits until some fiber sleeps for less than `withinMs` (a retry's delay, while a watchdog that sleeps longer is
 * already waiting from the start) and returns the earliest such wake-up's delay, in ms.
 */
export const awaitSleeperWithin = (withinMs: number): Effect.Effect<number> =>
  Effect.gen(function*() {
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const delays = Chunk.toReadonlyArray(yield* TestClock.sleeps()).map((at) => at - now).filter((delay) => delay < withinMs)
      if (delays.length > 0) return Math.min(...delays)
      yield* TestServices.provideLive(Effect.sleep("2 millis"))
    }
  })

/** Moves the TestClock to the earliest pending wake-up sooner than `withinMs`, and no further. */
export const wakeSleeperWithin = (withinMs: number): Effect.Effect<number> =>
  Effect.gen(function*() {
    const delay = yield* awaitSleeperWithin(withinMs)
    yield* TestClock.adjust(delay)
    return delay
  })

/** Moves the TestClock to the earliest pending wake-up, and no further. */
export const wakeNextSleeper: Effect.Effect<number> = Effect.suspend(() => wakeSleeperWithin(Number.POSITIVE_INFINITY))
