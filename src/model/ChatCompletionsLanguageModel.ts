import { LanguageModel, type Response, type Tool } from "@effect/ai"
import * as Sse from "@effect/experimental/Sse"
import { HttpBody, HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Chunk, Clock, Effect, Either, Layer, Option, Redacted, Schema, Stream } from "effect"
import { makeCachedStreamText } from "./cachedStreamText.js"
import { type PartsRunner } from "./partsRunner.js"
import { makeWireCache, toRequestBody } from "./ChatCompletionsPrompt.js"
import { fromCompletion } from "./ChatCompletionsResponse.js"
import { makeStreamAccumulator } from "./ChatCompletionsStream.js"
import { ChatCompletion, ChatCompletionChunk } from "./ChatCompletionsWire.js"
import {
  fromStatus,
  malformedBody,
  networkError,
  streamCut,
  type ProviderContext,
  ProviderError,
  requestFailure,
  toAiError
} from "./ProviderError.js"
import { pullOf } from "./ModelHttpClient.js"
import { retryingClient } from "./ProviderRetry.js"
import { keptSpan } from "../kernel/keptSpan.js"

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
const decodeChunk = Schema.decodeUnknownEither(Schema.parseJson(ChatCompletionChunk))

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

  /** Sends a request; anything but 2xx becomes a ProviderError (retries already spent: `duringRequest`). */
  const send = (body: Uint8Array, accept: string) =>
    client.execute(
      HttpClientRequest.post("/chat/completions").pipe(
        // The body's bytes, copied together from each message's encoded once (ChatCompletionsPrompt.ts WireCache).
        HttpClientRequest.setBody(HttpBody.uint8Array(body, "application/json")),
        HttpClientRequest.setHeader("accept", accept)
      )
    ).pipe(
      Effect.mapError(transportError),
      Effect.flatMap((response) =>
        response.status >= 200 && response.status < 300 ? Effect.succeed(response) : failure(response)
      ),
      Effect.mapError(requestFailure)
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
      const body = yield* toRequestBody(options.model, providerOptions, wireCache)
      const response = yield* send(body, "application/json")
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

  /**
   * The SSE body as stream parts, in one stage pulled straight from the body: bytes are decoded, split into events,
   * each chunk decoded and accumulated in plain code. A pipeline of stream stages (text decoding, the SSE channel,
   * takeWhile, mapEffect, concat) cost ~900 fiber operations a response, whatever its size.
   */
  const pullParts = (response: HttpClientResponse.HttpClientResponse) =>
    Effect.map(pullOf(response), (pullBytes) => {
      const accumulator = makeStreamAccumulator(context)
      const decoder = new TextDecoder()
      let parts: Array<Response.StreamPartEncoded> = []
      let failure: ProviderError | undefined
      // `[DONE]` seen: what follows it is not read. `ended`: the closing parts were sent.
      let done = false
      let ended = false
      const parser = Sse.makeParser((event) => {
        if (done || failure !== undefined || event._tag !== "Event") return
        if (event.data.trim() === "[DONE]") {
          done = true
          accumulator.sawDone()
          return
        }
        const chunk = decodeChunk(event.data)
        if (Either.isLeft(chunk)) {
          failure = malformedBody(context, event.data, "application/json", "a Chat Completions stream chunk")
          return
        }
        const pushed = accumulator.push(chunk.right)
        if (Either.isLeft(pushed)) failure = pushed.left
        else for (const part of pushed.right) parts.push(part)
      })
      const feed = (text: string) => {
        const error = parser.feed(text)
        if (error !== undefined && failure === undefined) {
          failure = malformedBody(context, text, "text/event-stream", `an event stream (${error.message})`)
        }
      }
      const emit = (): Effect.Effect<Chunk.Chunk<Response.StreamPartEncoded>, Option.Option<ProviderError>> => {
        if (failure !== undefined) return Effect.fail(Option.some(failure))
        const out = parts
        parts = []
        return Effect.succeed(Chunk.unsafeFromArray(out))
      }
      const closing = Effect.suspend(() => {
        ended = true
        return Either.match(accumulator.end(), {
          onLeft: (error) => Effect.fail(Option.some(error)),
          onRight: (last) => Effect.succeed(Chunk.unsafeFromArray([...parts, ...last]))
        })
      })
      const pull: Effect.Effect<Chunk.Chunk<Response.StreamPartEncoded>, Option.Option<ProviderError>> = Effect.suspend(() => {
        if (ended) return Effect.fail(Option.none())
        if (done) return closing
        return Effect.matchEffect(pullBytes, {
          onFailure: Option.match({
            onNone: () => {
              feed(decoder.decode())
              return failure !== undefined ? emit() : closing
            },
            onSome: (error) => Effect.fail(Option.some(transportError(error)))
          }),
          onSuccess: (bytes) => {
            for (const piece of bytes) {
              feed(decoder.decode(piece, { stream: true }))
              if (done || failure !== undefined) break
            }
            return emit()
          }
        })
      })
      return pull
    })

  /** Sends a streaming request; the pull of its parts lives in the scope, which releases the body. */
  const openStream = (providerOptions: LanguageModel.ProviderOptions) =>
    Effect.gen(function*() {
      const body = yield* toRequestBody(options.model, providerOptions, wireCache, {
        stream: true,
        stream_options: { include_usage: true }
      })
      const response = yield* send(body, "text/event-stream")
      const contentType = response.headers["content-type"] ?? ""
      if (!contentType.includes("text/event-stream")) {
        const body = yield* response.text.pipe(Effect.mapError(transportError))
        return yield* malformedBody(context, body, contentType, "an event stream (text/event-stream)")
      }
      return yield* pullParts(response)
    })

  const spanOptions = { attributes: { provider: options.provider, model: options.model, api: "chat" } }

  const streamText = (providerOptions: LanguageModel.ProviderOptions) =>
    openStream(providerOptions).pipe(
      Effect.map(Stream.repeatEffectChunkOption),
      Stream.unwrapScoped,
      Stream.mapError((error) => error._tag === "ProviderError" ? toAiError(error, "streamText") : error),
      Stream.withSpan("kern.model.streamText", spanOptions)
    )

  const runParts: PartsRunner = (input, onParts) =>
    Effect.gen(function*() {
      const span = yield* Effect.makeSpanScoped("LanguageModel.streamText", { captureStackTrace: false })
      const tools: ReadonlyArray<Tool.Any> = input.toolkit === undefined ? [] : Object.values(input.toolkit.tools)
      const pull = yield* openStream({
        prompt: input.prompt,
        tools,
        toolChoice: tools.length === 0 ? "none" : "auto",
        responseFormat: { type: "text" },
        span
      })
      while (true) {
        const next = yield* Effect.either(pull)
        if (Either.isRight(next)) {
          if (next.right.length > 0) yield* onParts(Chunk.toReadonlyArray(next.right))
        } else if (Option.isNone(next.left)) {
          return
        } else {
          return yield* next.left.value
        }
      }
    }).pipe(
      Effect.scoped,
      Effect.mapError((error) => error._tag === "ProviderError" ? toAiError(error, "streamText") : error),
      keptSpan("kern.model.streamText", spanOptions)
    )

  return yield* makeCachedStreamText({ generateText, streamText }, runParts)
})

export const layer = (
  options: ChatCompletionsOptions
): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
