import type { LanguageModel } from "@effect/ai"
import { Chunk, Effect, Option, Stream } from "effect"
import { asAiError } from "./BudgetExceeded.js"
import { type FinishLike, finishUsage } from "./finishUsage.js"
import { type PartsRunner, partsRunnerOf, PartsRunnerId, type WithPartsRunner } from "./partsRunner.js"
import { SpendAttribution, type SpendAttributionData } from "./SpendAttribution.js"
import type { SpendGuardShape } from "./SpendGuard.js"

interface PartLike extends FinishLike {
  readonly type: string
}

const finishOf = (parts: Iterable<PartLike>): FinishLike | undefined => {
  for (const part of parts) if (part.type === "finish") return part
  return undefined
}

/**
 * `model` behind the spend ceiling: every way of calling it (generateText, generateObject, streamText and kern's
 * fast path) is checked against the caps of the call's attribution (SpendAttribution, from the fiber's context) before
 * the provider is asked, and its finish part's tokens are recorded after. A refusal fails the call with an AiError
 * whose cause is the BudgetExceeded (BudgetExceeded.ts `budgetRefusal`), which no retry schedule retries.
 *
 * The methods are generic over their options (toolkits add their own errors and requirements); the wrapper adds an
 * AiError, which every one of them may already fail with, and nothing else: the casts restate the signatures
 * TypeScript cannot follow through the generic parameters (as cachedStreamText.ts does).
 */
export const guardLanguageModel = (
  model: LanguageModel.Service,
  modelId: string,
  guard: SpendGuardShape
): LanguageModel.Service => {
  const before = (method: string) =>
    Effect.flatMap(SpendAttribution, (who) => Effect.as(Effect.mapError(guard.check(who), (error) => asAiError(method, error)), who))
  const recordOf = (who: SpendAttributionData, finish: FinishLike | undefined) =>
    finish === undefined ? Effect.void : guard.record(who, modelId, finishUsage(finish))

  const generateText: LanguageModel.Service["generateText"] = (options) =>
    Effect.flatMap(before("generateText"), (who) =>
      Effect.tap(model.generateText(options), (response) => recordOf(who, finishOf(response.content)))) as unknown as ReturnType<
        LanguageModel.Service["generateText"]
      >

  const generateObject: LanguageModel.Service["generateObject"] = (options) =>
    Effect.flatMap(before("generateObject"), (who) =>
      Effect.tap(model.generateObject(options), (response) => recordOf(who, finishOf(response.content)))) as unknown as ReturnType<
        LanguageModel.Service["generateObject"]
      >

  const streamText: LanguageModel.Service["streamText"] = (options) =>
    Stream.unwrap(Effect.map(before("streamText"), (who) =>
      model.streamText(options).pipe(
        Stream.mapChunksEffect((parts) =>
          Option.match(Chunk.findFirst(parts, (part) => part.type === "finish"), {
            onNone: () => Effect.succeed(parts),
            onSome: (finish) => Effect.as(recordOf(who, finish), parts)
          })
        )
      ))) as unknown as ReturnType<LanguageModel.Service["streamText"]>

  const service: LanguageModel.Service = { generateText, generateObject, streamText }
  const runParts = partsRunnerOf(model)
  if (runParts === undefined) return service
  const guardedParts: PartsRunner = (input, onParts) =>
    Effect.flatMap(before("streamText"), (who) =>
      runParts(input, (parts) => {
        const finish = finishOf(parts)
        return finish === undefined ? onParts(parts) : Effect.zipRight(onParts(parts), recordOf(who, finish))
      }))
  const withParts: LanguageModel.Service & WithPartsRunner = { ...service, [PartsRunnerId]: guardedParts }
  return withParts
}
