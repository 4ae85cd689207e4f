import type { AiError, LanguageModel, Prompt, Response, Toolkit } from "@effect/ai"
import type { Effect } from "effect"

/** The key of kern's fast path on a LanguageModel service built by kern's own providers. */
export const PartsRunnerId: unique symbol = Symbol.for("kern/model/PartsRunner")

export interface PartsRunnerInput {
  readonly prompt: Prompt.Prompt
  /** The tools offered; their calls come back as parts, never run by @effect/ai. */
  readonly toolkit: Toolkit.WithHandler<any> | undefined
}

/**
 * One streamed model call whose parts are handed over as the provider encodes them, batch by batch, with no
 * Stream in between and no decode against the toolkit: the turn validates tool arguments itself (and wants calls
 * to unknown tools, which @effect/ai's decode refuses). A Stream pipeline costs ~1,600 fiber operations a call;
 * this costs a few dozen.
 */
export type PartsRunner = (
  input: PartsRunnerInput,
  onParts: (parts: ReadonlyArray<Response.StreamPartEncoded>) => Effect.Effect<void>
) => Effect.Effect<void, AiError.AiError>

/** A LanguageModel service that also offers the fast path. */
export interface WithPartsRunner {
  readonly [PartsRunnerId]: PartsRunner
}

/** The model's fast path when its provider has one (kern's Chat Completions); other models stream through @effect/ai. */
export const partsRunnerOf = (model: LanguageModel.Service): PartsRunner | undefined =>
  PartsRunnerId in model ? (model as LanguageModel.Service & WithPartsRunner)[PartsRunnerId] : undefined
