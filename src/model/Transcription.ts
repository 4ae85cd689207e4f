import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Duration, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import { AgentConfig, type LoadedConfig } from "../config/AgentConfig.js"
import { type AudioFile, Transcriber, TranscriptionFailed, layerOff } from "../media/Transcriber.js"
import type { ModelSettings } from "./ModelSettings.js"
import { resolveModelSettings } from "./ModelSettings.js"
import { providerDetail } from "./ProviderError.js"

/** How long one transcription may take before the audio goes on without a transcript. */
export const transcriptionTimeout = Duration.minutes(2)

const TranscriptionBody = Schema.Struct({ text: Schema.String })

/** What a person does to have voice notes transcribed, said when `transcriptionModel` is not set. */
export const transcriptionOffNote =
  "not transcribed: set \"transcriptionModel\" in .kern/config.json (e.g. \"whisper-1\") to have voice notes transcribed"

/** A body's gist for a note: an HTML page (a proxy, a wrong baseURL) is named, not quoted. */
const gist = (body: string) => /^\s*</.test(body) ? "an HTML page instead of JSON" : providerDetail(body).slice(0, 200)

/**
 * The multipart form as bytes (node's own encoder, through a web Response): the undici package kern's client sends
 * with does not take node's global FormData, whose class is another undici's.
 */
const multipart = (audio: AudioFile, model: string) =>
  Effect.promise(async () => {
    const form = new FormData()
    form.append("file", new Blob([audio.bytes], { type: audio.mediaType }), audio.name)
    form.append("model", model)
    const encoded = new Response(form)
    const contentType = encoded.headers.get("content-type") ?? "multipart/form-data"
    return { contentType, body: new Uint8Array(await encoded.arrayBuffer()) }
  })

/**
 * `POST {baseURL}/audio/transcriptions` (OpenAI's Whisper API, which OpenAI-compatible servers copy): a multipart
 * form with the audio as `file` and `model`, answered with `{ text }`. One attempt within transcriptionTimeout: a
 * voice note's message waits for it, and a failure only leaves the audio untranscribed (a note), so it is not retried.
 * The client is the agent's redacting one (RedactingHttpClient): the key travels in the Authorization header only.
 */
export const makeHttp = (settings: ModelSettings) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const url = `${settings.baseURL.replace(/\/+$/, "")}/audio/transcriptions`
    const failed = (message: string) => new TranscriptionFailed({ reason: "failed", message: `not transcribed: ${message}` })
    const where = `${settings.provider} at ${settings.baseURL}`

    const transcribe = (audio: AudioFile) =>
      Effect.gen(function*() {
        const form = yield* multipart(audio, settings.model)
        const request = HttpClientRequest.post(url).pipe(
          HttpClientRequest.bodyUint8Array(form.body, form.contentType),
          HttpClientRequest.acceptJson,
          Option.match(settings.apiKey, {
            onNone: () => (r: HttpClientRequest.HttpClientRequest) => r,
            onSome: (key) => HttpClientRequest.bearerToken(Redacted.value(key))
          })
        )
        const response = yield* client.execute(request).pipe(
          Effect.mapError((error) => failed(`${where} could not be reached (${error.reason})`))
        )
        if (response.status < 200 || response.status >= 300) {
          const body = yield* Effect.orElseSucceed(response.text, () => "")
          return yield* failed(`${where} answered HTTP ${response.status} (${gist(body)})`)
        }
        const decoded = yield* HttpClientResponse.schemaBodyJson(TranscriptionBody)(response).pipe(
          Effect.mapError(() => failed(`${where} answered something that is not a transcript`))
        )
        return decoded.text.trim()
      }).pipe(
        Effect.scoped,
        Effect.timeoutFail({
          duration: transcriptionTimeout,
          onTimeout: () => failed(`${where} took longer than ${Duration.format(transcriptionTimeout)}`)
        }),
        Effect.withSpan("kern.media.transcribe", { attributes: { bytes: audio.bytes.length, model: settings.model } })
      )

    return Transcriber.of({ transcribe })
  })

/** The transcriber a loaded config asks for: the provider's endpoint with `transcriptionModel`, or off, saying why. */
export const layerFromLoaded = (
  loaded: Pick<LoadedConfig, "config" | "env">
): Layer.Layer<Transcriber, never, HttpClient.HttpClient> => {
  const model = loaded.config.transcriptionModel
  if (model === undefined) return layerOff(transcriptionOffNote)
  return Either.match(resolveModelSettings(loaded), {
    onLeft: (missing) => layerOff(`not transcribed: ${missing.message}`),
    onRight: (settings) => Layer.effect(Transcriber, makeHttp({ ...settings, model }))
  })
}

export const layerFromConfig: Layer.Layer<Transcriber, never, AgentConfig | HttpClient.HttpClient> = Layer.unwrapEffect(
  Effect.map(AgentConfig, layerFromLoaded)
)
