import { AiError, LanguageModel, Prompt, type Response } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, type Duration, Effect, Either, Fiber, Option, Ref, Stream, TestClock } from "effect"
import { ProviderError } from "../../src/model/ProviderError.js"
import { modelStep } from "../../src/turn/modelStep.js"
import type { TurnEventBody } from "../../src/turn/TurnEvent.js"
import { type TurnStop, TurnStops } from "../../src/turn/TurnStops.js"
import { systemMessage } from "../../src/context/prompt.js"

const text = (delta: string): Response.StreamPartEncoded => ({ type: "text-delta", id: "t", delta })
const finish: Response.StreamPartEncoded = {
  type: "finish",
  reason: "stop",
  usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
}

/** A model whose stream sends `parts`, each after `gap` on the Clock. */
const slowModel = (parts: ReadonlyArray<Response.StreamPartEncoded>, gap: Duration.DurationInput) =>
  LanguageModel.make({
    generateText: () => Effect.die("not used"),
    streamText: () => Stream.fromIterable(parts).pipe(Stream.tap(() => Effect.sleep(gap)))
  })

const step = (model: LanguageModel.Service, stop?: TurnStop, emit: (event: TurnEventBody) => Effect.Effect<void> = () => Effect.void) =>
  modelStep({
    model,
    modelId: "m",
    prices: {},
    prompt: Prompt.fromMessages([systemMessage("s")]),
    toolkit: undefined,
    toolIdOf: () => undefined,
    emit,
    stop
  })

describe("modelStep watchdog", () => {
  it.effect("a stream that keeps sending, a part every 3 minutes, runs past 5 minutes in all", () =>
    Effect.gen(function*() {
      const model = yield* slowModel([text("a"), text("b"), text("c"), finish], "3 minutes")
      const fiber = yield* Effect.fork(step(model))
      for (let i = 0; i < 4; i++) yield* TestClock.adjust("3 minutes")
      const result = yield* Fiber.join(fiber)
      expect(result.text).toBe("abc")
    }))

  it.effect("the 5 minutes count from the last part: a part at 4 minutes, then silence, stops it at 9", () =>
    Effect.gen(function*() {
      const model = yield* LanguageModel.make({
        generateText: () => Effect.die("not used"),
        streamText: () =>
          Stream.make(text("a")).pipe(
            Stream.concat(Stream.fromEffect(Effect.as(Effect.sleep("4 minutes"), text("b")))),
            Stream.concat(Stream.fromEffect(Effect.as(Effect.sleep("1 hour"), finish)))
          )
      })
      const fiber = yield* Effect.fork(Effect.either(step(model)))
      yield* TestClock.adjust("5 minutes")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("4 minutes")
      const result = yield* Fiber.join(fiber)
      expect(result._tag === "Left" ? result.left._tag : "still running").toBe("WatchdogTimeout")
    }))
})

/** A running turn's stop, as TurnRunner holds it, for `body`; the turn is stopped with `stopAll`. */
const withStop = <A, E>(body: (stop: TurnStop, stopAll: Effect.Effect<unknown>) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const stops = yield* TurnStops
    const message = { turnId: "t1", interface: "web", channel: "web", userId: "operator" }
    return yield* stops.during(message, (stop) => body(stop, stops.stopWhere(() => true, "operator")))
  }).pipe(Effect.provide(TurnStops.Default))

const stoppedStep = (result: Either.Either<unknown, unknown>) =>
  Either.isLeft(result) && typeof result.left === "object" && result.left !== null && "_tag" in result.left &&
    result.left._tag === "StepStopped" && "partial" in result.left && "by" in result.left
    ? { partial: result.left.partial, by: result.left.by }
    : undefined

describe("modelStep stopped", () => {
  it.effect("mid-stream: the step ends with what the model had sent, and who stopped it", () =>
    withStop((stop, stopAll) =>
      Effect.gen(function*() {
        // "a" at once, then nothing for an hour.
        const model = yield* LanguageModel.make({
          generateText: () => Effect.die("not used"),
          streamText: () => Stream.make(text("a")).pipe(Stream.concat(Stream.fromEffect(Effect.as(Effect.sleep("1 hour"), finish))))
        })
        const shown = yield* Deferred.make<void>()
        const emit = (event: TurnEventBody) => event.type === "text-delta" ? Deferred.succeed(shown, undefined) : Effect.void
        const fiber = yield* Effect.fork(Effect.either(step(model, stop, emit)))
        yield* Deferred.await(shown)
        yield* stopAll
        const stopped = stoppedStep(yield* Fiber.join(fiber))
        expect(stopped?.partial).toMatchObject({ text: "a", calls: [] })
        expect(stopped?.by).toMatchObject({ _tag: "Stopped", by: "operator" })
      })))

  it.effect("while it waits to retry a stream that failed before any output: the retry is not made", () =>
    withStop((stop, stopAll) =>
      Effect.gen(function*() {
        const calls = yield* Ref.make(0)
        const model = yield* LanguageModel.make({
          generateText: () => Effect.die("not used"),
          streamText: () =>
            Stream.unwrap(Effect.as(Ref.update(calls, (n) => n + 1), Stream.fail(
              new AiError.UnknownError({ module: "test", method: "stream", cause: new ProviderError({ reason: "network", message: "reset" }) })
            )))
        })
        const waiting = yield* Deferred.make<void>()
        const emit = (event: TurnEventBody) => event.type === "retry" ? Deferred.succeed(waiting, undefined) : Effect.void
        const fiber = yield* Effect.fork(Effect.either(step(model, stop, emit)))
        yield* Deferred.await(waiting)
        yield* stopAll
        const stopped = stoppedStep(yield* Fiber.join(fiber))
        expect(stopped?.partial).toMatchObject({ text: "", calls: [] })
        expect(yield* Ref.get(calls)).toBe(1)
      })))

  it.effect("before it starts: it ends at once as stopped, with nothing said", () =>
    withStop((stop, stopAll) =>
      Effect.gen(function*() {
        yield* stopAll
        const model = yield* slowModel([text("a"), finish], "1 hour")
        expect(stoppedStep(yield* Effect.either(step(model, stop)))?.partial).toMatchObject({ text: "" })
        expect(yield* stop.stopped).toMatchObject(Option.some({ _tag: "Stopped", by: "operator" }))
      })))

  it.effect("not stopped: the watchdog still ends a silent stream, and a finished step leaves nothing armed", () =>
    withStop((stop) =>
      Effect.gen(function*() {
        const silent = yield* slowModel([text("a"), finish], "1 hour")
        const fiber = yield* Effect.fork(Effect.either(step(silent, stop)))
        yield* TestClock.adjust("5 minutes")
        const result = yield* Fiber.join(fiber)
        expect(Either.isLeft(result) ? result.left._tag : "finished").toBe("WatchdogTimeout")
        const quick = yield* slowModel([text("ok"), finish], "1 second")
        const next = yield* Effect.fork(step(quick, stop))
        yield* TestClock.adjust("2 seconds")
        expect((yield* Fiber.join(next)).text).toBe("ok")
        expect(yield* stop.stopped).toEqual(Option.none())
      })))
})

describe("TurnStops", () => {
  it.effect("a stop interrupts the guarded work (its finalizers run) and fails it as Stopped; a finished turn is not listed", () =>
    Effect.gen(function*() {
      const stops = yield* TurnStops
      const cleaned = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const message = { turnId: "t2", interface: "telegram", channel: "42", userId: "u7" }
      const work = Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(Effect.onInterrupt(() => Deferred.succeed(cleaned, undefined)))
      const fiber = yield* Effect.fork(stops.during(message, (stop) => Effect.either(stop.guarded(work))))
      yield* Deferred.await(started)
      expect(yield* stops.running).toEqual([{ turnId: "t2", conversationId: "telegram:42", userId: "u7", conversation: "main" }])
      expect(yield* stops.stop("other", "operator")).toEqual([])
      expect((yield* stops.stop("t2", "u7")).map((turn) => turn.turnId)).toEqual(["t2"])
      const result = yield* Fiber.join(fiber)
      expect(Either.isLeft(result) ? result.left : undefined).toMatchObject({ _tag: "Stopped", by: "u7", message: "stopped by u7" })
      yield* Deferred.await(cleaned)
      expect(yield* stops.running).toEqual([])
      // Asked again once it is over: nothing to stop.
      expect(yield* stops.stop("t2", "operator")).toEqual([])
    }).pipe(Effect.provide(TurnStops.Default)))

  it.effect("the operator's stop (TUI /stop, POST /stop) ends the operator's conversation's turn, not another person's beside it", () =>
    Effect.gen(function*() {
      const stops = yield* TurnStops
      const started = yield* Deferred.make<void>()
      const hang = (stop: TurnStop) => Effect.either(stop.guarded(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)))
      const friend = yield* Effect.fork(stops.during({ turnId: "f1", interface: "telegram", channel: "42", userId: "42", conversation: "telegram-42" }, hang))
      yield* Deferred.await(started)
      const operator = yield* Effect.fork(stops.during({ turnId: "o1", interface: "cli", channel: "terminal", userId: "operator" }, hang))
      while ((yield* stops.running).length < 2) yield* Effect.yieldNow()
      expect((yield* stops.stopOperators("operator")).map((turn) => turn.turnId)).toEqual(["o1"])
      expect(Either.isLeft(yield* Fiber.join(operator))).toBe(true)
      expect((yield* stops.running).map((turn) => turn.turnId)).toEqual(["f1"])
      yield* Fiber.interrupt(friend)
    }).pipe(Effect.provide(TurnStops.Default)))
})
