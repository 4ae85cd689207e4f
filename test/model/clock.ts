import { Chunk, Clock, Effect, TestClock, TestServices } from "effect"

/**
 * Waits until some fiber sleeps on the TestClock (a retry waiting out its delay) and returns how long it will
 * sleep, in ms. The request before it runs on real sockets, so this polls on the live clock; it asserts
 * nothing about time.
 */
export const awaitSleeper: Effect.Effect<number> = Effect.gen(function*() {
  let sleeps = yield* TestClock.sleeps()
  while (Chunk.isEmpty(sleeps)) {
    yield* TestServices.provideLive(Effect.sleep("2 millis"))
    sleeps = yield* TestClock.sleeps()
  }
  const now = yield* Clock.currentTimeMillis
  return Math.min(...Chunk.toReadonlyArray(sleeps)) - now
})

/** Moves the TestClock to the earliest pending wake-up, and no further. */
export const wakeNextSleeper: Effect.Effect<number> = Effect.gen(function*() {
  const delay = yield* awaitSleeper
  yield* TestClock.adjust(delay)
  return delay
})
