import { LanguageModel } from "@effect/ai"
import type { HttpClient } from "@effect/platform"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import type { AgentConfig } from "../config/AgentConfig.js"
import type { ModelConfigMissing } from "../model/ModelSettings.js"
import * as Provider from "../model/Provider.js"
import { SpendAttribution } from "../model/SpendAttribution.js"
import type { SpendGuard } from "../model/SpendGuard.js"
import type { SessionMessage } from "../session/messages.js"
import { rangeLabel, requestProblem, type SummarizeRequest, summaryPrompt } from "./summaryPrompt.js"

export type { SummarizeRequest } from "./summaryPrompt.js"

/** A segment could not be summarized; it stays without a summary and a later pass tries again. */
export class SummarizeError extends Schema.TaggedError<SummarizeError>()("SummarizeError", {
  message: Schema.String
}) {}

export interface SegmentSummarizerShape {
  /** The summary of a segment: of its messages (level 0) or of its children's summaries, merged in order. */
  readonly summarize: (request: SummarizeRequest) => Effect.Effect<string, SummarizeError>
}

/** Writes the summaries of the segment tree. Model-backed (`layer`) or deterministic (`layerTest`). */
export class SegmentSummarizer extends Context.Tag("kern/context/SegmentSummarizer")<
  SegmentSummarizer,
  SegmentSummarizerShape
>() {}

/**
 * How long one summary may take. The provider's client retries each request; this bounds the whole, so a hung
 * provider cannot hold the context's background pass (and the turns waiting on it) forever.
 */
export const summaryTimeout = Duration.minutes(5)

const invalid = (request: SummarizeRequest) => {
  const problem = requestProblem(request)
  return problem === undefined ? Effect.void : Effect.fail(new SummarizeError({ message: `cannot summarize ${problem}` }))
}

const spanOf = (request: SummarizeRequest) =>
  Effect.withSpan("kern.context.summarize", {
    attributes: { level: request.level, start: request.start, end: request.end, targetTokens: request.targetTokens }
  })

/** The summarizer over the LanguageModel in context: one `generateText` call per segment. */
export const make = Effect.gen(function*() {
  const model = yield* LanguageModel.LanguageModel
  const summarize = (request: SummarizeRequest) => {
    const range = rangeLabel(request.start, request.end)
    return Effect.gen(function*() {
      yield* invalid(request)
      // Charged to whoever the pass runs for (a turn's background pass: its conversation), as a summary.
      const who = yield* SpendAttribution
      const response = yield* model.generateText({ prompt: summaryPrompt(request) }).pipe(
        Effect.provideService(SpendAttribution, { ...who, purpose: "summary" }),
        Effect.mapError((error) =>
          new SummarizeError({ message: `the summary model failed on messages ${range}: ${error.message}` })
        )
      )
      const text = response.text.trim()
      if (text === "") {
        return yield* new SummarizeError({
          message: `the summary model answered with an empty summary of messages ${range}; it is tried again later`
        })
      }
      return text
    }).pipe(
      Effect.timeoutFail({
        duration: summaryTimeout,
        onTimeout: () =>
          new SummarizeError({
            message: `the summary model did not answer for messages ${range} within ${Duration.format(summaryTimeout)}`
          })
      }),
      spanOf(request)
    )
  }
  return SegmentSummarizer.of({ summarize })
})

/** The summarizer over whatever LanguageModel is provided. */
export const layerModel: Layer.Layer<SegmentSummarizer, never, LanguageModel.LanguageModel> = Layer.effect(
  SegmentSummarizer,
  make
)

/** The summarizer with its own model, private to it: `summaryModel`, else `model`. */
export const layer: Layer.Layer<SegmentSummarizer, ModelConfigMissing, AgentConfig | HttpClient.HttpClient | SpendGuard> = layerModel
  .pipe(Layer.provide(Provider.summaryLayer))

/**
 * No summarizer: for read-only inspections (`kern context show`), which plan the next request from the summaries
 * there are and never make one.
 */
export const layerInspectOnly: Layer.Layer<SegmentSummarizer> = Layer.succeed(SegmentSummarizer, {
  summarize: () => Effect.fail(new SummarizeError({ message: "a read-only inspection makes no summaries: the running agent does" }))
})

const firstWords = (text: string, words: number) => text.trim().split(/\s+/).slice(0, words).join(" ")

const messageText = (message: SessionMessage): string => {
  switch (message._tag) {
    case "user":
      return message.text
    case "assistant":
      return message.text !== "" ? message.text : message.toolCalls.map((call) => `→ ${call.name}`).join(" ")
    case "tool":
      return `${message.toolName}: ${typeof message.result === "string" ? message.result : JSON.stringify(message.result) ?? ""}`
    case "turn-failed":
      return `turn failed: ${message.message}`
  }
}

/** The test layer's summary: the range, then the first words of each message or child summary, within the target. */
export const testSummary = (request: SummarizeRequest): string => {
  const parts = request.level === 0
    ? (request.messages ?? []).map((message) => `${message._tag}: ${firstWords(messageText(message), 8)}`)
    : (request.children ?? []).map((child) => firstWords(child.summary ?? "", 12))
  const text = `L${request.level} messages ${rangeLabel(request.start, request.end)}: ${parts.join(" | ")}`
  return text.slice(0, Math.max(40, request.targetTokens * 4)).trim()
}

export interface TestOptions {
  /** Requests for which the summary fails (a provider outage for chosen segments). */
  readonly failWhen?: ((request: SummarizeRequest) => boolean) | undefined
}

/** A deterministic summarizer with no model (DESIGN.md: model-backed work has a test layer). */
export const layerTest = (options: TestOptions = {}): Layer.Layer<SegmentSummarizer> =>
  Layer.succeed(
    SegmentSummarizer,
    SegmentSummarizer.of({
      summarize: (request) =>
        Effect.gen(function*() {
          yield* invalid(request)
          if (options.failWhen?.(request) === true) {
            return yield* new SummarizeError({
              message: `the test summarizer was told to fail on messages ${rangeLabel(request.start, request.end)}`
            })
          }
          return testSummary(request)
        }).pipe(spanOf(request))
    })
  )
