import { AiError, LanguageModel, Prompt } from "@effect/ai"
import { modelStep, watchdogTimeout } from "../../src/turn/modelStep.js"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Clock, Duration, Effect, Fiber, Option, Stream, TestClock, TestServices } from "effect"
import { fromAiError } from "../../src/model/ProviderError.js"
import { FakeReply } from "../support/fakeModelServer.js"
import { awaitSleeper, wakeNextSleeper, wakeSleeperWithin } from "./clock.js"
import { type ModelTestEnv, withChatModel, withLeanChatModel, withLeanResponsesModel, withResponsesModel } from "./harness.js"
import type { FakeModelServerShape } from "../support/fakeModelServer.js"

type WithModel = <A, E>(
  body: (server: FakeModelServerShape) => Effect.Effect<A, E, ModelTestEnv>
) => ReturnType<typeof withChatModel<A, E>>

const generate = LanguageModel.generateText({ prompt: "hello" })
const stream = Stream.runCollect(LanguageModel.streamText({ prompt: "hello" }))
const failure = <A, R>(effect: Effect.Effect<A, AiError.AiError, R>) => Effect.map(Effect.flip(effect), (e) => fromAiError(e))

const step = (model: LanguageModel.Service) =>
  modelStep({
    model,
    modelId: "m",
    prices: {},
    prompt: Prompt.make("hello"),
    toolkit: undefined,
    toolIdOf: () => undefined,
    emit: () => Effect.void
  })

const apis: ReadonlyArray<readonly [string, WithModel, string]> = [
  ["Chat Completions", withChatModel, "OPENROUTER_API_KEY"],
  ["Responses", withResponsesModel, "OPENAI_API_KEY"],
  // The same cases over the client a running agent gives its model (src/model/ModelHttpClient.ts).
  ["Chat Completions over kern's model client", withLeanChatModel, "OPENROUTER_API_KEY"],
  ["Responses over kern's model client", withLeanResponsesModel, "OPENAI_API_KEY"]
]

describe.each(apis)("provider errors over %s", (_name, withModel, keyEnv) => {
  it.scoped("429 with Retry-After waits that long, then succeeds", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.error(429, { retryAfter: 5 }), FakeReply.text("recovered"))
        const fiber = yield* Effect.fork(generate)
        yield* awaitSleeper
        expect(yield* server.requests).toHaveLength(1)
        // Longer than any jittered backoff (≤ 1.2 s), shorter than Retry-After: still waiting.
        yield* TestClock.adjust("4 seconds")
        expect(yield* server.requests).toHaveLength(1)
        yield* TestClock.adjust("1 second")
        const response = yield* Fiber.join(fiber)
        expect(response.text).toBe("recovered")
        expect(yield* server.requests).toHaveLength(2)
      })
    ))

  it.scoped("5xx is retried 4 attempts in all, then fails as a provider error", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(...Array.from({ length: 4 }, () => FakeReply.error(503)), FakeReply.text("too late"))
        const fiber = yield* Effect.fork(failure(generate))
        const delays: Array<number> = []
        for (let retry = 1; retry <= 3; retry++) {
          expect(yield* server.awaitRequests(retry)).toHaveLength(retry)
          delays.push(yield* wakeNextSleeper)
        }
        const error = yield* Fiber.join(fiber)
        expect(error.reason).toBe("provider")
        expect(error.status).toBe(503)
        expect(error.retryable).toBe(true)
        expect(yield* server.requests).toHaveLength(4)
        // Exponential from 1 s with ±20% jitter: about 1, 2 and 4 s.
        expect(delays[0]).toBeGreaterThanOrEqual(800)
        expect(delays[0]).toBeLessThan(delays[1] ?? 0)
        expect(delays[1]).toBeLessThan(delays[2] ?? 0)
        expect(delays[2]).toBeLessThanOrEqual(4800)
      })
    ))

  it.scoped("401 is an auth error naming the key variable, not retried", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.error(401), FakeReply.text("never sent"))
        const error = yield* failure(generate)
        expect(error.reason).toBe("auth")
        expect(error.status).toBe(401)
        expect(error.message).toContain(keyEnv)
        expect(error.message).toContain("Incorrect API key provided")
        expect(yield* server.requests).toHaveLength(1)
      })
    ))

  it.scoped("401 while streaming is an auth error too", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.error(401))
        const error = yield* failure(stream)
        expect(error.reason).toBe("auth")
      })
    ))

  it.scoped("403 with an HTML page says the server refused with a page, not that the key was rejected", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.error(403, { html: true }), FakeReply.error(403, { html: true }))
        for (const error of [yield* failure(generate), yield* failure(stream)]) {
          expect(error.status).toBe(403)
          expect(error.message).toContain("refused the request with an HTML page (HTTP 403)")
          expect(error.message).not.toContain("rejected the API key")
          expect(error.retryable).toBe(false)
        }
        expect(yield* server.requests).toHaveLength(2)
      })
    ))

  it.scoped("a stream cut before any text arrived is retried, and the retry's answer is the step's", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.text("lost", { cutAfter: 0 }), FakeReply.text("recovered"))
        const model = yield* LanguageModel.LanguageModel
        const fiber = yield* Effect.fork(step(model))
        yield* server.awaitRequests(1)
        // The step's watchdog sleeps from the start; the retry's wait is the one due before it.
        yield* wakeSleeperWithin(Duration.toMillis(watchdogTimeout))
        const result = yield* Fiber.join(fiber)
        expect(result.text).toBe("recovered")
        expect(yield* server.modelRequests).toHaveLength(2)
      })
    ))

  it.scoped("a step whose request keeps failing (5xx) makes 4 attempts in all: the step does not retry what the HTTP client retried", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(...Array.from({ length: 20 }, () => FakeReply.error(503)))
        const model = yield* LanguageModel.LanguageModel
        const fiber = yield* Effect.fork(Effect.flip(step(model)))
        // Every retry's wait is woken (the watchdog, which sleeps longer from the start, is not) until the step ends.
        let waits = 0
        for (;;) {
          if (Option.isSome(yield* Fiber.poll(fiber))) break
          const now = yield* Clock.currentTimeMillis
          const due = Chunk.toReadonlyArray(yield* TestClock.sleeps()).map((at) => at - now)
            .filter((delay) => delay < Duration.toMillis(watchdogTimeout))
          if (due.length === 0) {
            yield* TestServices.provideLive(Effect.sleep("2 millis"))
            continue
          }
          yield* TestClock.adjust(Math.min(...due))
          waits++
        }
        const failed = yield* Fiber.join(fiber)
        if (!AiError.isAiError(failed)) return expect.fail(`the step failed with ${failed._tag}`)
        expect(fromAiError(failed).status).toBe(503)
        expect(yield* server.modelRequests).toHaveLength(4)
        expect(waits).toBe(3)
      })
    ))

  it.scoped("a stream cut after text arrived is not retried (the text was already shown)", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.text("a long answer that never finishes", { cutAfter: 4 }), FakeReply.text("again"))
        const model = yield* LanguageModel.LanguageModel
        const error = yield* Effect.flip(step(model))
        expect(error.message).toContain("closed the stream")
        expect(yield* server.modelRequests).toHaveLength(1)
      })
    ))

  it.scoped("402 is a billing error", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.error(402))
        const error = yield* failure(generate)
        expect(error.reason).toBe("billing")
        expect(error.message).toContain("Insufficient credits")
        expect(yield* server.requests).toHaveLength(1)
      })
    ))

  it.scoped("an HTML page with status 200 is a provider error that points at baseURL", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.error(200, { html: true }))
        const error = yield* failure(generate)
        expect(error.reason).toBe("provider")
        expect(error.message).toContain("HTML")
        expect(error.message).toContain("baseURL")
      })
    ))

  it.scoped("an HTML 404 is a provider error, not retried", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.error(404, { html: true }), FakeReply.text("never sent"))
        const error = yield* failure(stream)
        expect(error.reason).toBe("provider")
        expect(error.message).toContain("HTML")
        expect(yield* server.requests).toHaveLength(1)
      })
    ))

  it.scoped("an HTML 502 from a URL that ends in /v1 says the server failed, not that baseURL is wrong", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(...Array.from({ length: 4 }, () => FakeReply.error(502, { html: true })))
        const fiber = yield* Effect.fork(failure(generate))
        for (let retry = 1; retry <= 3; retry++) {
          yield* server.awaitRequests(retry)
          yield* wakeNextSleeper
        }
        const error = yield* Fiber.join(fiber)
        expect(server.baseURL).toMatch(/\/v1$/)
        expect(error.status).toBe(502)
        expect(error.message).toContain("the server (or a proxy in front of it) failed")
        expect(error.message).not.toContain("baseURL")
      })
    ))

  it.scoped("a stream cut mid-way says the provider closed the stream", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.text("a long answer that never finishes", { cutAfter: 2 }))
        const error = yield* failure(stream)
        expect(error.message).toContain("closed the stream before the answer was complete")
        expect(error.message).not.toContain("cannot reach")
      })
    ))

  it.scoped("an answer with no text and no tool calls is no_output", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.empty())
        expect((yield* failure(generate)).reason).toBe("no_output")
      })
    ))

  it.scoped("a streamed answer with no text and no tool calls is no_output", () =>
    withModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.empty())
        expect((yield* failure(stream)).reason).toBe("no_output")
      })
    ))
})
