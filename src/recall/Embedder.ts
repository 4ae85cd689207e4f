import { HttpBody, HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Context, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import { AgentConfig, type LoadedConfig } from "../config/AgentConfig.js"
import type { ModelSettings } from "../model/ModelSettings.js"
import { providerDetail, type ProviderContext } from "../model/ProviderError.js"
import { RetryNotices, retryingClient } from "../model/ProviderRetry.js"
import { SpendGuard } from "../model/SpendGuard.js"
import { bagOfWordsEmbedding } from "./bagOfWords.js"
import { embeddingChoice } from "./embeddingChoice.js"

/** Inputs per `/embeddings` request. */
export const embeddingBatch = 100

/**
 * Embedding failed. `unsupported`: the endpoint does not exist (HTTP 404), so recall goes keyword-only; `failed`:
 * anything else (network, auth, 5xx after the retries, a malformed body); the next pass tries again.
 */
export class EmbeddingError extends Schema.TaggedError<EmbeddingError>()("EmbeddingError", {
  reason: Schema.Literal("unsupported", "failed"),
  message: Schema.String
}) {}

export interface EmbedderShape {
  /** The model's name; none when embeddings are off (keyword-only recall), with why in `offReason`. */
  readonly model: Option.Option<string>
  readonly offReason: string
  /** One unit-or-not vector per text, in order; batches of `embeddingBatch`. */
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>, EmbeddingError>
}

/** Turns texts into vectors for recall: a provider's `/embeddings`, none, or a deterministic test embedder. */
export class Embedder extends Context.Tag("kern/recall/Embedder")<Embedder, EmbedderShape>() {}

const EmbeddingsBody = Schema.Struct({
  data: Schema.Array(Schema.Struct({ index: Schema.optional(Schema.Number), embedding: Schema.Array(Schema.Number) })),
  usage: Schema.optional(Schema.Struct({ prompt_tokens: Schema.optional(Schema.Number) }))
})

/** Embeddings are the agent's own, whoever's turn asked for them: charged to the agent alone (its perDay cap). */
const embeddingSpend = { purpose: "embedding" } as const

/** A batch's tokens when the server does not say (about four characters a token). */
const estimatedTokens = (texts: ReadonlyArray<string>): number => texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0)

const batches = <A>(items: ReadonlyArray<A>): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += embeddingBatch) out.push(items.slice(i, i + embeddingBatch))
  return out
}

/** Runs `embedBatch` over the texts, `embeddingBatch` at a time. */
const batched = (embedBatch: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>, EmbeddingError>) =>
(texts: ReadonlyArray<string>) =>
  Effect.map(Effect.forEach(batches(texts), embedBatch), (parts) => parts.flat())

/**
 * `POST {baseURL}/embeddings` (OpenAI, OpenRouter, Ollama, vLLM), with the provider's retry schedule, behind the
 * spend ceiling: each request is checked against the agent's perDay cap before it is sent and its tokens recorded
 * (the server's `usage.prompt_tokens`, else an estimate); cost where `prices` or the built-in table knows the model.
 */
export const makeHttp = (settings: ModelSettings) =>
  Effect.gen(function*() {
    const guard = yield* SpendGuard
    const context: ProviderContext = { provider: settings.provider, baseURL: settings.baseURL, keyEnv: settings.keyEnv }
    const client = retryingClient(context)(yield* HttpClient.HttpClient)
    const url = `${settings.baseURL.replace(/\/+$/, "")}/embeddings`
    const failed = (message: string) => new EmbeddingError({ reason: "failed", message })

    const embedBatch = (texts: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        yield* guard.check(embeddingSpend).pipe(Effect.mapError((refused) => failed(refused.message)))
        const request = HttpClientRequest.post(url).pipe(
          HttpClientRequest.setBody(HttpBody.unsafeJson({ model: settings.model, input: texts })),
          Option.match(settings.apiKey, {
            onNone: () => (r: HttpClientRequest.HttpClientRequest) => r,
            onSome: (key) => HttpClientRequest.bearerToken(Redacted.value(key))
          })
        )
        const response = yield* client.execute(request).pipe(
          Effect.mapError((error) => failed(`${settings.provider} at ${settings.baseURL} could not be reached: ${error.message}`)),
          // A failed embedding is reported once, by recall (keyword search still works): its retries are told to no
          // one, which logs them as info lines, not as a terminal's warnings on the way out of a chat.
          Effect.provideService(RetryNotices, () => Effect.void)
        )
        if (response.status === 404) {
          return yield* new EmbeddingError({
            reason: "unsupported",
            message: `${settings.provider} at ${settings.baseURL} has no /embeddings for "${settings.model}" (HTTP 404)`
          })
        }
        if (response.status < 200 || response.status >= 300) {
          const body = yield* Effect.orElseSucceed(response.text, () => "")
          return yield* failed(`${settings.provider} /embeddings failed (HTTP ${response.status}: ${providerDetail(body)})`)
        }
        const decoded = yield* HttpClientResponse.schemaBodyJson(EmbeddingsBody)(response).pipe(
          Effect.mapError(() => failed(`${settings.provider} /embeddings sent a body that is not a list of embeddings`))
        )
        if (decoded.data.length !== texts.length) {
          return yield* failed(`${settings.provider} /embeddings answered ${decoded.data.length} vectors for ${texts.length} inputs`)
        }
        // Some servers (Ollama) report 0 for a batch that had text: the estimate then, never nothing.
        const reported = decoded.usage?.prompt_tokens ?? 0
        const inputTokens = reported > 0 ? reported : estimatedTokens(texts)
        yield* guard.record(embeddingSpend, settings.model, { inputTokens, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 })
        const ordered = [...decoded.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
        return ordered.map((item) => Float32Array.from(item.embedding))
      }).pipe(Effect.withSpan("kern.recall.embed", { attributes: { inputs: texts.length } }))

    return Embedder.of({ model: Option.some(settings.model), offReason: "", embed: batched(embedBatch) })
  })

/** No embeddings: recall is keyword-only, and `reason` says why (`kern status` shows it). */
export const layerNone = (reason: string): Layer.Layer<Embedder> =>
  Layer.succeed(Embedder, {
    model: Option.none(),
    offReason: reason,
    embed: () => Effect.fail(new EmbeddingError({ reason: "unsupported", message: reason }))
  })

/** A deterministic in-process embedder (bag of words, see bagOfWords.ts): tests and benchmarks. */
export const layerTest = (options: {
  readonly model?: string
  readonly dimensions: number
  readonly synonyms?: Readonly<Record<string, string>>
}): Layer.Layer<Embedder> =>
  Layer.succeed(Embedder, {
    model: Option.some(options.model ?? "test-embedding"),
    offReason: "",
    embed: batched((texts) =>
      Effect.succeed(texts.map((text) => Float32Array.from(bagOfWordsEmbedding(text, options.dimensions, options.synonyms))))
    )
  })

/** The embedder a loaded config asks for: the provider's `/embeddings`, or none (`embeddingModel: false`, no default). */
export const layerFromLoaded = (
  loaded: Pick<LoadedConfig, "config" | "env">
): Layer.Layer<Embedder, never, HttpClient.HttpClient | SpendGuard> =>
  Either.match(embeddingChoice(loaded), {
    onLeft: layerNone,
    onRight: (settings) => Layer.effect(Embedder, makeHttp(settings))
  })

export const layerFromConfig: Layer.Layer<Embedder, never, AgentConfig | HttpClient.HttpClient | SpendGuard> = Layer.unwrapEffect(
  Effect.map(AgentConfig, layerFromLoaded)
)
