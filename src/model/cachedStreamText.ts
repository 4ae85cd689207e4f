import { AiError, IdGenerator, LanguageModel, Prompt, Response, type Tool, Toolkit } from "@effect/ai"
import { type PartsRunner, PartsRunnerId, type WithPartsRunner } from "./partsRunner.js"
import { type Chunk, Effect, Option, type ParseResult, Schema, Stream } from "effect"

type StreamPartsDecoder = (
  parts: Chunk.Chunk<Response.StreamPartEncoded>
) => Effect.Effect<Chunk.Chunk<Response.StreamPart<any>>, ParseResult.ParseError>

/**
 * A LanguageModel whose `streamText` builds the decoder of its stream parts once per toolkit. @effect/ai's own
 * (`LanguageModel.make`) builds `Response.StreamPart(toolkit)` and compiles its decoder on every call: with kern's
 * tools that is ~5 ms of schema construction per model step, whatever the step sends.
 *
 * It covers the calls kern makes (no toolkit, or a toolkit with tool call resolution disabled) and behaves as
 * @effect/ai's does for them: the same provider options, span, tool choice and decode errors. Any other call (a
 * toolkit whose calls @effect/ai should run) goes to the service `LanguageModel.make` built. A provider that can
 * hand over its parts without a Stream passes `runParts`, kern's fast path (partsRunner.ts).
 */
export const makeCachedStreamText = (
  params: LanguageModel.ConstructorParams,
  runParts?: PartsRunner
): Effect.Effect<LanguageModel.Service> =>
  Effect.gen(function*() {
    const base = yield* LanguageModel.make(params)
    // As LanguageModel.make: the IdGenerator in context when the model is built, else @effect/ai's default.
    const idGenerator = Option.getOrElse(yield* Effect.serviceOption(IdGenerator.IdGenerator), () => IdGenerator.defaultIdGenerator)
    // Per model instance, keyed by the toolkit value: the turn keeps one while its tools do not change.
    const decoders = new WeakMap<object, StreamPartsDecoder>()
    const decoderFor = (toolkit: Toolkit.Any | Toolkit.WithHandler<any>): StreamPartsDecoder => {
      const cached = decoders.get(toolkit)
      if (cached !== undefined) return cached
      const decoder: StreamPartsDecoder = Schema.decode(Schema.ChunkFromSelf(Response.StreamPart(toolkit)))
      decoders.set(toolkit, decoder)
      return decoder
    }
    const emptyToolkit = decoderFor(Toolkit.empty)

    const stream = (
      options: LanguageModel.GenerateTextOptions<Record<string, Tool.Any>>,
      toolkit: Toolkit.Any | Toolkit.WithHandler<any> | undefined
    ) =>
      Effect.gen(function*() {
        const span = yield* Effect.makeSpanScoped("LanguageModel.streamText", {
          captureStackTrace: false,
          attributes: { concurrency: options.concurrency, toolChoice: options.toolChoice }
        })
        const tools: ReadonlyArray<Tool.Any> = toolkit === undefined ? [] : Object.values(toolkit.tools)
        const toolChoice = options.toolChoice ?? "auto"
        const offered = typeof toolChoice === "object" && "oneOf" in toolChoice
          ? tools.filter((tool) => toolChoice.oneOf.includes(tool.name))
          : tools
        const providerOptions: LanguageModel.ProviderOptions = {
          prompt: Prompt.make(options.prompt),
          tools: offered.length === 0 ? [] : offered,
          toolChoice: tools.length === 0 ? "none" : toolChoice,
          responseFormat: { type: "text" },
          span
        }
        const decode = toolkit === undefined || tools.length === 0 ? emptyToolkit : decoderFor(toolkit)
        return params.streamText(providerOptions).pipe(
          Stream.mapChunksEffect((parts) =>
            decode(parts).pipe(
              Effect.mapError((error) =>
                AiError.MalformedOutput.fromParseError({ module: "LanguageModel", method: "streamText", error })
              )
            )
          )
        )
      }).pipe(Stream.unwrapScoped)

    const streamText: LanguageModel.Service["streamText"] = (options) => {
      const toolkit = options.toolkit
      // An Effect-built toolkit or tool call resolution by @effect/ai: the base does all of that.
      if (toolkit !== undefined && (Effect.isEffect(toolkit) || options.disableToolCallResolution !== true)) {
        return base.streamText(options)
      }
      // The narrowed call has no requirements and fails only with AiError, which is what the generic signature
      // computes for such options; TypeScript cannot follow that through the generic parameters.
      return stream(options as LanguageModel.GenerateTextOptions<Record<string, Tool.Any>>, toolkit).pipe(
        Stream.provideService(IdGenerator.IdGenerator, idGenerator)
      ) as unknown as ReturnType<LanguageModel.Service["streamText"]>
    }
    const service = { ...base, streamText } satisfies LanguageModel.Service
    return runParts === undefined ? service : { ...service, [PartsRunnerId]: runParts } satisfies LanguageModel.Service & WithPartsRunner
  })
