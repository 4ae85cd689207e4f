import { LanguageModel, type Response } from "@effect/ai"
import * as Sse from "@effect/experimental/Sse"
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Clock, Effect, Either, Layer, Redacted, Schema, Stream } from "effect"
import { makeWireCache, toRequest } from "./ChatCompletionsPrompt.js"
import { fromCompletion } from "./ChatCompletionsResponse.js"
import { makeStreamAccumulator } from "./ChatCompletionsStream.js"
import { ChatCompletion, ChatCompletionChunk, type ChatRequest } from "./ChatCompletionsWire.js"
import {
  fromStatus,
  malformedBody,
  networkError,
  streamCut,
  type ProviderContext,
  ProviderError,
  toAiError
} from "./ProviderError.js"
import { retryingClient } from "./ProviderRetry.js"

/** One Chat Completions endpoint: Ollama, vLLM, LM Studio, llama.cpp, LiteLLM, OpenRouter, OpenAI. */
export interface ChatCompletionsOptions {
  readonly model: string
  /** The API root, e.g. `http://localhost:11434/v1`; `/chat/completions` is appended. */
  readonly baseURL: string
  readonly apiKey?: Redacted.Redacted | undefined
  /** How messages name the provider ("openrouter", "ollama", …). */
  readonly provider: string
  /** The variable holding the key, named in auth errors. */
  readonly keyEnv?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Retry 429, 5xx and network failures on `providerRetrySchedule` (default true). */
  readonly retry?: boolean | undefined
}

const decodeCompletion = Schema.decodeUnknown(Schema.parseJson(ChatCompletion))
const decodeChunk = Schema.decodeUnknown(Schema.parseJson(ChatCompletionChunk))

export const make = Effect.fn("kern.model.ChatCompletions.make")(function*(options: ChatCompletionsOptions) {
  const baseURL = options.baseURL.replace(/\/+$/, "")
  const context: ProviderContext = { provider: options.provider, baseURL, keyEnv: options.keyEnv }
  const base = (yield* HttpClient.HttpClient).pipe(
    HttpClient.mapRequest((request) =>
      request.pipe(
        HttpClientRequest.prependUrl(baseURL),
        options.apiKey === undefined
          ? (r) => r
          : HttpClientRequest.bearerToken(Redacted.value(options.apiKey)),
        HttpClientRequest.setHeaders(options.headers ?? {})
      )
    )
  )
  const client = options.retry === false ? base : retryingClient(context)(base)

  const transportError = (error: HttpClientError.HttpClientError): ProviderError =>
    error._tag === "RequestError"
      ? networkError(context, error.description ?? error.reason)
      : streamCut(context, error.description ?? error.reason)

  /** Sends a request; anything but 2xx becomes a ProviderError (retries already spent). */
  const send = (body: ChatRequest, accept: string) =>
    client.execute(
      HttpClientRequest.post("/chat/completions").pipe(
        HttpClientRequest.bodyUnsafeJson(body),
        HttpClientRequest.setHeader("accept", accept)
      )
    ).pipe(
      Effect.mapError(transportError),
      Effect.flatMap((response) =>
        response.status >= 200 && response.status < 300 ? Effect.succeed(response) : failure(response)
      )
    )

  const failure = (response: HttpClientResponse.HttpClientResponse) =>
    Effect.gen(function*() {
      const body = yield* response.text.pipe(Effect.mapError(transportError))
      const now = yield* Clock.currentTimeMillis
      return yield* fromStatus(context, { status: response.status, headers: response.headers, body }, now)
    })

  const wireCache = makeWireCache()

  const generateText = (providerOptions: LanguageModel.ProviderOptions) =>
    Effect.gen(function*() {
      const request = yield* toRequest(options.model, providerOptions, wireCache)
      const response = yield* send(request, "application/json")
      const text = yield* response.text.pipe(Effect.mapError(transportError))
      const contentType = response.headers["content-type"]
      const completion = yield* decodeCompletion(text).pipe(
        Effect.mapError(() => malformedBody(context, text, contentType, "a Chat Completions response"))
      )
      return yield* Either.match(fromCompletion(context, completion), {
        onLeft: (error) => Effect.fail(error),
        onRight: (parts) => Effect.succeed(parts)
      })
    }).pipe(
      Effect.mapError((error) => error._tag === "ProviderError" ? toAiError(error, "generateText") : error),
      Effect.withSpan("kern.model.generateText", {
        attributes: { provider: options.provider, model: options.model, api: "chat" }
      })
    )

  const events = (response: HttpClientResponse.HttpClientResponse) => {
    const accumulator = makeStreamAccumulator(context)
    const fromEither = (result: Either.Either<Array<Response.StreamPartEncoded>, ProviderError>) =>
      Either.match(result, { onLeft: Effect.fail, onRight: Effect.succeed })
    return response.stream.pipe(
      Stream.mapError(transportError),
      Stream.decodeText(),
      Stream.pipeThroughChannel(Sse.makeChannel()),
      Stream.takeWhile((event) => {
        const done = event.data.trim() === "[DONE]"
        if (done) accumulator.sawDone()
        return !done
      }),
      Stream.mapEffect((event) =>
        decodeChunk(event.data).pipe(
          Effect.mapError(() => malformedBody(context, event.data, "application/json", "a Chat Completions stream chunk")),
          Effect.flatMap((chunk) => fromEither(accumulator.push(chunk)))
        )
      ),
      Stream.concat(Stream.fromEffect(Effect.suspend(() => fromEither(accumulator.end())))),
      Stream.flattenIterables
    )
  }

  const streamText = (providerOptions: LanguageModel.ProviderOptions) =>
    Effect.gen(function*() {
      const request = yield* toRequest(options.model, providerOptions, wireCache)
      const response = yield* send(
        { ...request, stream: true, stream_options: { include_usage: true } },
        "text/event-stream"
      )
      const contentType = response.headers["content-type"] ?? ""
      if (!contentType.includes("text/event-stream")) {
        const body = yield* response.text.pipe(Effect.mapError(transportError))
        return yield* malformedBody(context, body, contentType, "an event stream (text/event-stream)")
      }
      return events(response)
    }).pipe(
      Stream.unwrapScoped,
      Stream.mapError((error) => error._tag === "ProviderError" ? toAiError(error, "streamText") : error),
      Stream.withSpan("kern.model.streamText", {
        attributes: { provider: options.provider, model: options.model, api: "chat" }
      })
    )

  return yield* LanguageModel.make({ generateText, streamText })
})

export const layer = (
  options: ChatCompletionsOptions
): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
