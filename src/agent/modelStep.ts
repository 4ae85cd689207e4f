import { AiError, type LanguageModel, type Prompt, type Toolkit } from "@effect/ai"
import { Chunk, Effect, ParseResult, Ref, Schema, Stream } from "effect"
import { type ModelPrice, usageCostCents } from "../model/pricing.js"
import { addUsage, noUsage, type TurnEvent, type TurnUsage } from "./TurnEvent.js"

/** A stream that produced nothing for this long is stuck: the watchdog ends it. */
export const watchdogTimeout = "5 minutes"

export class WatchdogTimeout extends Schema.TaggedError<WatchdogTimeout>()("WatchdogTimeout", {}) {
  override get message() {
    return `the model stream sent nothing for ${watchdogTimeout}; the turn was stopped`
  }
}

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
  readonly usage?: { readonly inputTokens?: number; readonly outputTokens?: number; readonly cachedInputTokens?: number }
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
  readonly emit: (event: TurnEvent) => Effect.Effect<void>
}

/** One model call, streamed: text deltas and tool calls are reported as they arrive. */
export const modelStep = (options: ModelStepOptions) =>
  Effect.gen(function*() {
    const state = yield* Ref.make<StepResult>({ text: "", calls: [], usage: noUsage })
    const apply = (part: RawPart): Effect.Effect<void> => {
      switch (part.type) {
        case "text-delta": {
          const delta = typeof part.delta === "string" ? part.delta : ""
          return Effect.zipRight(options.emit({ type: "text", delta }), Ref.update(state, (s) => ({ ...s, text: s.text + delta })))
        }
        case "tool-call": {
          const rawName = String(part.name)
          const call = { id: String(part.id), name: options.toolIdOf(rawName) ?? rawName, params: part.params }
          return Effect.zipRight(options.emit({ type: "tool-call", ...call }), Ref.update(state, (s) => ({ ...s, calls: [...s.calls, call] })))
        }
        case "finish": {
          const raw = part.usage ?? {}
          const usage = {
            inputTokens: raw.inputTokens ?? 0,
            outputTokens: raw.outputTokens ?? 0,
            cachedInputTokens: raw.cachedInputTokens ?? 0,
            costUsdCents: usageCostCents(options.modelId, raw, options.prices)
          }
          return Ref.update(state, (s) => ({ ...s, usage: addUsage(s.usage, usage) }))
        }
        default:
          return Effect.void
      }
    }
    const stream = options.model.streamText({
      prompt: options.prompt,
      ...(options.toolkit === undefined ? {} : { toolkit: options.toolkit, disableToolCallResolution: true as const })
    })
    yield* stream.pipe(
      Stream.timeoutFail(() => new WatchdogTimeout(), watchdogTimeout),
      Stream.runForEach((part) => apply(part as RawPart)),
      Effect.catchIf((error) => refusedParts(error) !== undefined, (error) =>
        Effect.forEach(refusedParts(error) ?? [], apply, { discard: true }))
    )
    return yield* Ref.get(state)
  }).pipe(Effect.withSpan("kern.agent.modelStep"))
