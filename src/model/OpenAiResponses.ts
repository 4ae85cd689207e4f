import type { AiError, LanguageModel } from "@effect/ai"
import { type Generated, OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import type { HttpClient } from "@effect/platform"
import { Clock, Effect, Layer, Option, Ref, Stream } from "effect"
import { rawArgumentsOf, toolCallParams } from "../kernel/toolArgs.js"
import type { ModelSettings } from "./ModelSettings.js"
import {
  fromAiError,
  noOutput,
  type ProviderContext,
  ProviderError,
  streamCut,
  toAiError
} from "./ProviderError.js"
import { retryingClient } from "./ProviderRetry.js"

// The OpenAI Responses API through @effect/ai-openai, with kern's retries, error classification and
// no-output check wrapped around its client.

export const contextOf = (settings: ModelSettings): ProviderContext => ({
  provider: settings.provider,
  baseURL: settings.baseURL,
  keyEnv: settings.keyEnv
})

const classify = (context: ProviderContext, method: string) => (error: AiError.AiError) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(toAiError(fromAiError(error, context, now), method)))

const hasOutput = (response: Generated.Response): boolean =>
  response.output.some((item) =>
    item.type === "function_call" ||
    (item.type === "message" &&
      item.content.some((part) => part.type === "output_text" && part.text.trim() !== ""))
  )

const streamFailure = (context: ProviderContext, event: OpenAiClient.ResponseStreamEvent): Option.Option<ProviderError> => {
  if (event.type === "error") {
    return Option.some(
      new ProviderError({ reason: "provider", message: `${context.provider} failed while streaming: ${event.message}` })
    )
  }
  if (event.type === "response.failed") {
    const detail = event.response.error?.message ?? "no details given"
    return Option.some(
      new ProviderError({ reason: "provider", message: `${context.provider} failed the response: ${detail}` })
    )
  }
  return Option.none()
}

const isOutputEvent = (event: OpenAiClient.ResponseStreamEvent): boolean =>
  (event.type === "response.output_text.delta" && event.delta.trim() !== "") ||
  (event.type === "response.output_item.done" && event.item.type === "function_call")

/** The events that close a response: without one, the stream was cut short. */
const isTerminalEvent = (event: OpenAiClient.ResponseStreamEvent): boolean =>
  event.type === "response.completed" || event.type === "response.incomplete" || event.type === "response.failed"

/**
 * A function call's argument text as @effect/ai-openai can parse it. Its provider parses the text itself and fails
 * the whole response when it is not JSON, ending the turn; a model's malformed arguments are the model's mistake,
 * for the executor to answer with a VALIDATION_ERROR. So text that is not a JSON object is rewritten to carry the
 * text as the model wrote it (`toolCallParams`); a JSON object is left as it is.
 */
const safeArguments = (text: string): string => {
  const params = toolCallParams(text)
  return rawArgumentsOf(params) === undefined && text.trim() !== "" ? text : JSON.stringify(params)
}

const withSafeArguments = <I extends { readonly type: string }>(item: I): I =>
  item.type === "function_call" && "arguments" in item && typeof item.arguments === "string"
    ? { ...item, arguments: safeArguments(item.arguments) }
    : item

const safeEvent = (event: OpenAiClient.ResponseStreamEvent): OpenAiClient.ResponseStreamEvent =>
  event.type === "response.output_item.done" ? { ...event, item: withSafeArguments(event.item) } : event

/**
 * Wraps the client so every failure carries a ProviderError, an empty answer fails as no_output, and a function
 * call's malformed arguments reach the executor.
 */
const guard = (context: ProviderContext) => (client: OpenAiClient.Service): OpenAiClient.Service => ({
  ...client,
  createResponse: (request) =>
    client.createResponse(request).pipe(
      Effect.catchAll(classify(context, "createResponse")),
      Effect.map((response) => ({ ...response, output: response.output.map(withSafeArguments) })),
      Effect.filterOrFail(hasOutput, () => toAiError(noOutput(context, "none"), "createResponse"))
    ),
  createResponseStream: (request) =>
    Stream.unwrap(Effect.map(Ref.make({ output: false, complete: false }), (seen) =>
      client.createResponseStream(request).pipe(
        Stream.catchAll((error) => Stream.fromEffect(classify(context, "createResponseStream")(error))),
        Stream.mapEffect((event) =>
          Option.match(streamFailure(context, event), {
            onSome: (error) => Effect.fail(toAiError(error, "createResponseStream")),
            onNone: () =>
              Effect.as(
                Ref.update(seen, (was) => ({
                  output: was.output || isOutputEvent(event),
                  complete: was.complete || isTerminalEvent(event)
                })),
                safeEvent(event)
              )
          })
        ),
        Stream.concat(Stream.fromEffect(Ref.get(seen)).pipe(
          Stream.flatMap(({ complete, output }) =>
            !complete
              ? Stream.fail(toAiError(streamCut(context), "createResponseStream"))
              : output
              ? Stream.empty
              : Stream.fail(toAiError(noOutput(context, "none"), "createResponseStream"))
          )
        ))
      )
    ))
})

/** An OpenAiClient against `settings.baseURL` with retries and kern's error semantics. */
export const clientLayer = (
  settings: ModelSettings,
  options: { readonly retry?: boolean | undefined } = {}
): Layer.Layer<OpenAiClient.OpenAiClient, never, HttpClient.HttpClient> => {
  const context = contextOf(settings)
  return Layer.scoped(
    OpenAiClient.OpenAiClient,
    OpenAiClient.make({
      apiKey: Option.getOrUndefined(settings.apiKey),
      apiUrl: settings.baseURL.replace(/\/+$/, ""),
      ...(options.retry === false ? {} : { transformClient: retryingClient(context) })
    }).pipe(Effect.map(guard(context)))
  )
}

/**
 * A LanguageModel over the Responses API. Function tools go out with `strict: false`: strict mode rejects
 * tools whose parameters have optional fields, which kern's tools do.
 */
export const languageModelLayer = (
  settings: ModelSettings,
  options: { readonly retry?: boolean | undefined } = {}
): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  OpenAiLanguageModel.layer({ model: settings.model, config: { strict: false } }).pipe(
    Layer.provide(clientLayer(settings, options))
  )
