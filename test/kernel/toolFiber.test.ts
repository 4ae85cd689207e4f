import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, type Duration, Effect, Exit, Fiber, Layer, Option, type Scope, TestClock } from "effect"
import { runToolFiber } from "../../src/kernel/toolFiber.js"
import { recordingTracer } from "../support/recordingTracer.js"

class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}

/** The work's exit, the span left aside. */
const exitOf = <A, E>(work: Effect.Effect<A, E, Scope.Scope | Greeting>, overrides: Partial<typeof options> = {}) =>
  Effect.map(runToolFiber(work, { ...options, ...overrides }), (ended) => ended.exit)

const options = { context: Context.make(Greeting, "hello"), timeout: "2 seconds" as Duration.DurationInput, onTimeout: () => "late" as const }

describe("runToolFiber", () => {
  // Under the TestClock the timer never fires on its own: these return only because nothing waits for it.
  it.effect("returns the work's exit when it finishes first, without waiting for the timer", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* exitOf(Effect.succeed(1)), Exit.succeed(1))
      assert.deepStrictEqual(yield* exitOf(Effect.fail("boom")), Exit.fail("boom"))
      const suspended = Effect.zipRight(Effect.yieldNow(), Effect.succeed(2))
      assert.deepStrictEqual(yield* exitOf(suspended), Exit.succeed(2))
    }))

  it.effect("gives the work the given services and a Scope closed with its exit", () =>
    Effect.gen(function*() {
      const closed = yield* Deferred.make<Exit.Exit<unknown, unknown>>()
      const work = Effect.zipRight(
        Effect.addFinalizer((exit) => Deferred.succeed(closed, exit)),
        Greeting
      )
      assert.deepStrictEqual(yield* exitOf(work), Exit.succeed("hello"))
      assert.deepStrictEqual(yield* Deferred.await(closed), Exit.succeed("hello"))
    }))

  it.effect("a defect is the work's exit, not a failure of the caller", () =>
    Effect.gen(function*() {
      const exit = yield* exitOf(Effect.die(new Error("kaput")))
      assert.isTrue(Exit.isFailure(exit) && Exit.causeOption(exit).pipe(Option.isSome))
      assert.isFalse(Exit.isSuccess(exit))
    }))

  it.effect("fails with onTimeout after the duration on the Clock, after the work's finalizers ran", () =>
    Effect.gen(function*() {
      const finalized = yield* Deferred.make<void>()
      const work = Effect.zipRight(Effect.addFinalizer(() => Deferred.succeed(finalized, undefined)), Effect.never)
      const fiber = yield* Effect.fork(exitOf(work))
      yield* TestClock.adjust("1999 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.join(fiber)
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
      )
      const fiber = yield* Effect.fork(exitOf(work, { timeout: "1 hour" }))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Deferred.isDone(finalized))
    }))

  // On the live clock the timeout is a timer and an observer, not a fiber of its own (toolFiber.ts): the same three outcomes.
  it.live("on the live clock: the work's exit when it finishes first; onTimeout after its finalizers ran; the caller's interrupt reaches the work", () =>
    Effect.gen(function*() {
      const later = Effect.zipRight(Effect.promise(() => new Promise((done) => setImmediate(done))), Effect.succeed(3))
      assert.deepStrictEqual(yield* exitOf(later, { timeout: "1 hour" }), Exit.succeed(3))
      assert.deepStrictEqual(yield* exitOf(Effect.zipRight(Effect.yieldNow(), Effect.fail("boom")), { timeout: "1 hour" }), Exit.fail("boom"))

      const finalized = yield* Deferred.make<void>()
      const stuck = Effect.zipRight(Effect.addFinalizer(() => Deferred.succeed(finalized, undefined)), Effect.never)
      assert.deepStrictEqual(yield* exitOf(stuck, { timeout: "20 millis" }), Exit.fail("late"))
      assert.isTrue(yield* Deferred.isDone(finalized))

      const interrupted = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const work = Effect.zipRight(
        Effect.zipRight(Effect.addFinalizer(() => Deferred.succeed(interrupted, undefined)), Deferred.succeed(started, undefined)),
        Effect.never
      )
      const fiber = yield* Effect.fork(exitOf(work, { timeout: "1 hour" }))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Deferred.isDone(interrupted))
    }))

  it.effect("traces the work in a span that is the parent of the work's spans, ended with its exit", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recordingTracer()
      const work = Effect.withSpan(Effect.succeed(1), "inner")
      const ended = yield* runToolFiber(work, { ...options, span: { name: "outer", attributes: { "kern.tool.id": "t" } } }).pipe(
        Effect.provide(Layer.setTracer(tracer))
      )
      assert.deepStrictEqual(ended.exit, Exit.succeed(1))
      assert.strictEqual(ended.span, spans.find((span) => span.name === "outer"))
      const outer = spans.find((span) => span.name === "outer")
      const inner = spans.find((span) => span.name === "inner")
      assert.strictEqual(outer?.attributes.get("kern.tool.id"), "t")
      assert.strictEqual(inner?.parentSpanId, outer?.spanId)
      assert.isTrue(outer?.ended && inner?.ended)
    }))
})
