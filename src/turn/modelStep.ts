import { AiError, type LanguageModel, type Prompt, type Toolkit } from "@effect/ai"
import { Chunk, Clock, Data, Duration, Effect, ParseResult, Schedule, Schema, Stream } from "effect"
import { finishUsage } from "../model/finishUsage.js"
import { boundedToolParams } from "../kernel/toolArgs.js"
import { partsRunnerOf } from "../model/partsRunner.js"
import { fromAiError, ProviderError } from "../model/ProviderError.js"
import { providerRetrySchedule, RetryNotices } from "../model/ProviderRetry.js"
import { type ModelPrice, usageCostCents } from "../model/pricing.js"
import { addUsage, noUsage, type TurnEventBody, type TurnUsage } from "./TurnEvent.js"
import type { Stopped } from "./TurnFailure.js"
import type { TurnStop } from "./TurnStops.js"
import { usageAttributes } from "./turnSpan.js"
import { annotateKeptSpan, keptSpan } from "../kernel/keptSpan.js"

/** A stream that produced nothing for this long is stuck: the watchdog ends it. */
export const watchdogTimeout = "5 minutes"
const watchdogMillis = Duration.toMillis(watchdogTimeout)

export class WatchdogTimeout extends Schema.TaggedError<WatchdogTimeout>()("WatchdogTimeout", {}) {
  override get message() {
    return `the model stream sent nothing for ${watchdogTimeout}; the turn was stopped`
  }
}

/** The turn was stopped while the model streamed (`by`): what the model had sent by then (its calls not run). */
export class StepStopped extends Data.TaggedError("StepStopped")<{ readonly partial: StepResult; readonly by: Stopped }> {}

/** What the retry schedule sees for a failure it must not retry (a stream that already showed output). */
const notRetried = new ProviderError({ reason: "provider", message: "not retried" })

export interface StepCall {
  readonly id: string
  readonly name: string
  readonly params: unknown
}

export interface StepResult {
  readonly text: string
  readonly calls: ReadonlyArray<StepCall>
  readonly usage: TurnUsage
}

interface RawPart {
  readonly type?: unknown
  readonly delta?: unknown
  readonly id?: unknown
  readonly name?: unknown
  readonly params?: unknown
  readonly usage?: {
    readonly inputTokens?: number | undefined
    readonly outputTokens?: number | undefined
    readonly cachedInputTokens?: number | undefined
  }
  /** Provider metadata: where cache writes and Anthropic's own usage travel (model/finishUsage.ts). */
  readonly metadata?: unknown
}

/**
 * The parts of a chunk @effect/ai refused to decode. It decodes tool calls against the offered tools, so a call to
 * a tool that does not exist fails the whole chunk; kern wants that call to reach its executor instead (which
 * answers NOT_FOUND with the valid names), so the model can recover.
 */
const refusedParts = (error: unknown): ReadonlyArray<RawPart> | undefined => {
  if (!AiError.isAiError(error) || error._tag !== "MalformedOutput" || !ParseResult.isParseError(error.cause)) {
    return undefined
  }
  const actual: unknown = error.cause.issue.actual
  const parts = Chunk.isChunk(actual) ? Chunk.toReadonlyArray(actual) : Array.isArray(actual) ? actual : undefined
  return parts?.filter((part): part is RawPart => typeof part === "object" && part !== null)
}

export interface ModelStepOptions {
  readonly model: LanguageModel.Service
  readonly modelId: string
  /** Prices from config, over the built-in table. */
  readonly prices: Readonly<Record<string, ModelPrice>>
  /** Prompt values, not encoded messages: @effect/ai passes a Prompt through without decoding it again. */
  readonly prompt: Prompt.Prompt
  readonly toolkit: Toolkit.WithHandler<any> | undefined
  readonly toolIdOf: (name: string) => string | undefined
  /** The step's events; the turn names them with its ids. */
  readonly emit: (event: TurnEventBody) => Effect.Effect<void>
  /** The turn's stop: a stop ends the step where it is, as the watchdog ends it, with what it had (StepStopped). */
  readonly stop?: TurnStop | undefined
}

/** One model call, streamed: text deltas and tool calls are reported as they arrive. */
export const modelStep = (options: ModelStepOptions) =>
  Effect.gen(function*() {
    // The step's own accumulation, local to this run of the step: plain variables, not an Effect per part.
    let text = ""
    const calls: Array<StepCall> = []
    let usage = noUsage
    let retries = 0
    // When the stream last sent something, for the watchdog: one timer per step, not one race per part.
    let lastPart = yield* Clock.currentTimeMillis
    const watchdog = Effect.gen(function*() {
      while (true) {
        const idle = (yield* Clock.currentTimeMillis) - lastPart
        if (idle >= watchdogMillis) return yield* new WatchdogTimeout()
        yield* Effect.sleep(watchdogMillis - idle)
      }
    })
    const apply = (part: RawPart): Effect.Effect<void> | undefined => {
      switch (part.type) {
        case "text-delta": {
          const delta = typeof part.delta === "string" ? part.delta : ""
          text += delta
          return options.emit({ type: "text-delta", delta })
        }
        case "tool-call": {
          const rawName = String(part.name)
          // Every provider's calls pass here: a value nested too deep goes no further than this (see boundedToolParams).
          const params = boundedToolParams(part.params)
          const call = { id: String(part.id), name: options.toolIdOf(rawName) ?? rawName, params }
          calls.push(call)
          return options.emit({ type: "tool-call", ...call })
        }
        case "finish": {
          const tokens = finishUsage(part)
          usage = addUsage(usage, { ...tokens, costUsdCents: usageCostCents(options.modelId, tokens, options.prices) })
          return undefined
        }
        default:
          return undefined
      }
    }
    const applyAll = (parts: Iterable<RawPart>): Effect.Effect<void> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        lastPart = now
        const effects: Array<Effect.Effect<void>> = []
        for (const part of parts) {
          const effect = apply(part)
          if (effect !== undefined) effects.push(effect)
        }
        return effects.length === 0 ? Effect.void : Effect.all(effects, { discard: true })
      })
    const runParts = partsRunnerOf(options.model)
    const streamed = runParts !== undefined
      ? runParts({ prompt: options.prompt, toolkit: options.toolkit }, applyAll)
      : options.model.streamText({
        prompt: options.prompt,
        ...(options.toolkit === undefined ? {} : { toolkit: options.toolkit, disableToolCallResolution: true as const })
      }).pipe(
        Stream.runForEachChunk((parts) => applyAll(parts as Iterable<RawPart>)),
        Effect.catchIf((error) => refusedParts(error) !== undefined, (error) => applyAll(refusedParts(error) ?? []))
      )
    // A stream that fails before any text or call arrived (cut, reset, a 5xx frame) showed the user nothing: it is
    // retried as a failed request is. Once something was shown, a retry would show it twice, so the failure stands.
    // A request that failed (`duringRequest`) was retried already, by the HTTP client.
    const shownNothing = () => text === "" && calls.length === 0
    const retryBeforeOutput = Schedule.mapInput(
      providerRetrySchedule,
      (error: AiError.AiError): ProviderError => {
        if (!shownNothing()) return notRetried
        const failure = fromAiError(error)
        // Retrying the step as well made 4 × 4 attempts of a request that fails (16 over 35 s for a refused connection).
        return failure.duringRequest === true ? notRetried : failure
      }
    )
    // Each retry, of the request (RedactingHttpClient's retryingClient) or of a stream that showed nothing, is told to
    // the turn's followers as it waits.
    const retried = Effect.retry(streamed, retryBeforeOutput).pipe(
      Effect.provideService(RetryNotices, ({ text, waitMs }) => {
        retries += 1
        return options.emit({ type: "retry", text, waitMs })
      })
    )
    // The watchdog runs beside the whole step, its retries' waits included (it counts from the last part, or the
    // step's start), and the turn's stop interrupts it: one fiber beside the stream per step, nothing per part.
    const stop = options.stop
    yield* stop === undefined ? Effect.raceFirst(retried, watchdog) : stop.guarded(retried, watchdog).pipe(
      Effect.catchTag("Stopped", (by) => Effect.suspend(() => Effect.fail(new StepStopped({ partial: { text, calls: [...calls], usage }, by }))))
    )
    yield* annotateKeptSpan(() => ({
      ...(options.modelId === "" ? {} : { "gen_ai.request.model": options.modelId }),
      ...usageAttributes(usage),
      "kern.model.tool_calls": calls.length,
      "kern.model.retries": retries
    }))
    return { text, calls, usage } satisfies StepResult
  }).pipe(keptSpan("kern.agent.modelStep"))
