import { LanguageModel, Prompt, type Response } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Fiber, Option, Stream, TestClock } from "effect"
import { modelStep } from "../../src/turn/modelStep.js"
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

const step = (model: LanguageModel.Service) =>
  modelStep({
    model,
    modelId: "m",
    prices: {},
    prompt: Prompt.fromMessages([systemMessage("s")]),
    toolkit: undefined,
    toolIdOf: () => undefined,
    emit: () => Effect.void
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
