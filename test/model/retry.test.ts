import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Ref, TestClock } from "effect"
import { parseRetryAfter, ProviderError } from "../../src/model/ProviderError.js"
import { withProviderRetry } from "../../src/model/ProviderRetry.js"

const rateLimited = (retryAfterSeconds?: number) =>
  new ProviderError({
    reason: "rate_limit",
    status: 429,
    message: "slow down",
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds })
  })

describe("provider retry policy", () => {
  it("parses Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2025-01-01T00:00:00Z")
    expect(parseRetryAfter("7", now)).toBe(7)
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:30 GMT", now)).toBe(30)
    expect(parseRetryAfter("Tue, 31 Dec 2024 23:00:00 GMT", now)).toBe(0)
    expect(parseRetryAfter("soon", now)).toBeUndefined()
    expect(parseRetryAfter(undefined, now)).toBeUndefined()
  })

  it.effect("withProviderRetry waits out Retry-After and gives up after 4 attempts", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make(0)
      const call = Ref.updateAndGet(attempts, (n) => n + 1).pipe(Effect.flatMap(() => Effect.fail(rateLimited(20))))
      const fiber = yield* Effect.fork(Effect.flip(withProviderRetry(call)))
      yield* TestClock.adjust("19 seconds")
      expect(yield* Ref.get(attempts)).toBe(1)
      yield* TestClock.adjust("1 second")
      expect(yield* Ref.get(attempts)).toBe(2)
      yield* TestClock.adjust("60 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error.reason).toBe("rate_limit")
      expect(yield* Ref.get(attempts)).toBe(4)
    }))

  it.effect("does not retry auth errors, nor waits longer than a minute", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make(0)
      const failWith = (error: ProviderError) =>
        Ref.update(attempts, (n) => n + 1).pipe(Effect.flatMap(() => Effect.fail(error)))
      yield* Effect.flip(withProviderRetry(failWith(new ProviderError({ reason: "auth", status: 401, message: "no" }))))
      expect(yield* Ref.get(attempts)).toBe(1)
      yield* Effect.flip(withProviderRetry(failWith(rateLimited(3600))))
      expect(yield* Ref.get(attempts)).toBe(2)
    }))
})
