import { type HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Array as Arr, Context, Duration, Effect, Either, Layer, Option, Ref, Stream, SubscriptionRef } from "effect"
import { createServer } from "node:http"
import { bagOfWordsEmbedding } from "../../src/recall/bagOfWords.js"
import { MediaRefused, mediaPartsOf, type RecordedMedia } from "./fakeModelMedia.js"
import {
  chatBody,
  chatEvents,
  embeddingsBody,
  type FakeToolCall,
  type FakeTurn,
  type FakeUsage,
  messagesBody,
  messagesEvents,
  responsesBody,
  responsesEvents
} from "./fakeModelWire.js"

export type { FakeToolCall, FakeTurn, FakeUsage } from "./fakeModelWire.js"
export type { RecordedMedia } from "./fakeModelMedia.js"

/** One scripted answer to `POST /responses`, `POST /chat/completions` or (when on) `POST /messages`. */
export type FakeReply =
  | {
    readonly _tag: "Turn"
    readonly turn: FakeTurn
    readonly delay?: Duration.DurationInput | undefined
    /** Streams only this many SSE frames, then drops the connection (a provider or proxy dying mid-answer). */
    readonly cutAfter?: number | undefined
    /** Streams only this many SSE frames, then sends nothing more and keeps the connection open (a long answer). */
    readonly hangAfter?: number | undefined
  }
  | {
    readonly _tag: "Failure"
    readonly status: number
    readonly retryAfter?: string | undefined
    readonly html?: boolean | undefined
    readonly body?: string | undefined
    readonly delay?: Duration.DurationInput | undefined
  }

interface TurnOptions {
  readonly usage?: Partial<FakeUsage> | undefined
  /** Waits before answering, on the server's Clock: under TestClock a test must adjust time past it. */
  readonly delay?: Duration.DurationInput | undefined
  readonly cutAfter?: number | undefined
  readonly hangAfter?: number | undefined
}

const turn = (text: string, toolCalls: ReadonlyArray<FakeToolCall>, options: TurnOptions = {}): FakeReply => ({
  _tag: "Turn",
  turn: { text, toolCalls, usage: { input: 12, output: 7, cached: 0, ...options.usage } },
  delay: options.delay,
  cutAfter: options.cutAfter,
  hangAfter: options.hangAfter
})

export const FakeReply = {
  text: (text: string, options?: TurnOptions): FakeReply => turn(text, [], options),
  toolCalls: (calls: ReadonlyArray<FakeToolCall>, options?: TurnOptions & { readonly text?: string }): FakeReply =>
    turn(options?.text ?? "", calls, options),
  /** A well-formed answer with no text and no tool calls. */
  empty: (options?: TurnOptions): FakeReply => turn("", [], options),
  /** An HTTP failure; `html` sends an HTML page (a proxy's error page), `body` replaces the JSON error. */
  error: (
    status: number,
    options: {
      readonly retryAfter?: string | number
      readonly html?: boolean
      readonly body?: string
      readonly delay?: Duration.DurationInput
    } = {}
  ): FakeReply => ({
    _tag: "Failure",
    status,
    retryAfter: options.retryAfter === undefined ? undefined : String(options.retryAfter),
    html: options.html,
    body: options.body,
    delay: options.delay
  })
} as const

export interface RecordedRequest {
  readonly method: string
  /** Path below the API root, e.g. `/chat/completions`. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  /** The JSON body, parsed (undefined when it was not JSON). */
  readonly body: unknown
  /** The images and files a model request carried, read from its API's shape (fakeModelMedia.ts). */
  readonly media: ReadonlyArray<RecordedMedia>
}

/**
 * How `POST /embeddings` answers from now on. By default every text gets a hash-derived vector (equal texts equal,
 * others unrelated); `bagOfWords` makes texts that share words (or words in `synonyms`) near, so paraphrases are
 * found; `status` answers that HTTP error instead (404: no such endpoint, 500: a failing one).
 */
export interface EmbeddingScript {
  readonly bagOfWords?: { readonly dimensions: number; readonly synonyms?: Readonly<Record<string, string>> }
  readonly status?: number
  /** Waits this long before answering (on the server's Clock): an embedder that is slow to answer. */
  readonly delay?: Duration.DurationInput
}

/**
 * How `POST /audio/transcriptions` answers from now on: by default `{ text }` with `text` (default "fake transcript");
 * `status` answers that HTTP error instead (JSON in OpenAI's shape, or an HTML page with `html`); `delay` waits first.
 */
export interface TranscriptionScript {
  readonly text?: string
  readonly status?: number
  readonly html?: boolean
  readonly delay?: Duration.DurationInput
}

/** A recorded `/audio/transcriptions` request's form: its fields, and the file part's name, type and bytes. */
export interface RecordedTranscription {
  readonly fields: Readonly<Record<string, string>>
  readonly file: { readonly name: string; readonly type: string; readonly bytes: Uint8Array } | undefined
}

export interface FakeModelServerShape {
  /** The API root to configure as `baseURL`, e.g. `http://127.0.0.1:41234/v1`. */
  readonly baseURL: string
  /** Queues replies; each model request takes the next one (embeddings take none). */
  readonly reply: (...replies: ReadonlyArray<FakeReply>) => Effect.Effect<void>
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** The requests to the model itself (`/responses`, `/chat/completions`, `/messages`): the agent's recall also embeds. */
  readonly modelRequests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** Scripts `/embeddings` (see EmbeddingScript). */
  readonly embeddings: (script: EmbeddingScript) => Effect.Effect<void>
  /**
   * Every request for `model` (the body's `model`, e.g. the agent's `summaryModel`) gets `reply` instead of taking
   * one from the queue, until set again (`undefined`: back to the queue): a summary model that fails on every call.
   */
  readonly answerModel: (model: string, reply: FakeReply | undefined) => Effect.Effect<void>
  /** Scripts `/audio/transcriptions` (see TranscriptionScript). */
  readonly transcriptions: (script: TranscriptionScript) => Effect.Effect<void>
  /** Waits (without timers) until at least `count` requests have arrived. */
  readonly awaitRequests: (count: number) => Effect.Effect<ReadonlyArray<RecordedRequest>>
}

export class FakeModelServer extends Context.Tag("kern/test/FakeModelServer")<FakeModelServer, FakeModelServerShape>() {}

const htmlPage = (status: number) =>
  `<!DOCTYPE html>\n<html><head><title>${status}</title></head><body><h1>${status} Bad Gateway</h1>` +
  "<p>nginx</p></body></html>"

/** Error types Anthropic and OpenAI both use, so either client decodes the body. */
const errorType = (status: number) =>
  status === 401
    ? "authentication_error"
    : status === 402
    ? "billing_error"
    : status === 403
    ? "permission_error"
    : status === 404
    ? "not_found_error"
    : status === 429
    ? "rate_limit_error"
    : status >= 500
    ? "api_error"
    : "invalid_request_error"

const errorJson = (status: number, message?: string) =>
  JSON.stringify({
    type: "error",
    error: {
      type: errorType(status),
      message: message ?? (status === 401
        ? "Incorrect API key provided"
        : status === 402
        ? "Insufficient credits"
        : status === 429
        ? "Rate limit exceeded"
        : `Scripted failure ${status}`),
      code: status
    }
  })

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const encoder = new TextEncoder()
const sse = (frames: ReadonlyArray<string>, cutAfter?: number, hangAfter?: number) =>
  HttpServerResponse.stream(
    hangAfter !== undefined
      ? Stream.fromIterable(frames.slice(0, hangAfter)).pipe(Stream.map((frame) => encoder.encode(frame)), Stream.concat(Stream.never))
      : cutAfter === undefined
      ? Stream.fromIterable(frames).pipe(Stream.map((frame) => encoder.encode(frame)))
      : Stream.fromIterable(frames.slice(0, cutAfter)).pipe(
        Stream.map((frame) => encoder.encode(frame)),
        // A failing body makes the server destroy the socket: the client sees the stream end without its last chunk.
        Stream.concat(Stream.fail(new Error("fake model server: connection cut")))
      ),
    { contentType: "text/event-stream", headers: { "cache-control": "no-cache" } }
  )

const stringInputs = (input: unknown): Array<string> =>
  typeof input === "string" ? [input] : Array.isArray(input) ? input.map((x) => String(x)) : []

export interface FakeServerOptions {
  /** Keep request bodies (default true); a benchmark sending 18 MB prompts turns it off. */
  readonly record?: boolean
  /**
   * The answer when no scripted reply is left (default: a 500 saying so); a function makes it from the request's
   * JSON body (a model that echoes what it was asked).
   */
  readonly fallback?: FakeReply | ((body: Record<string, unknown>) => FakeReply)
  /**
   * Also speak Anthropic's Messages API at `POST /messages` (the Anthropic client's `/v1/messages` below the root).
   * Off by default: without it that path is a 404, which some tests rely on.
   */
  readonly messagesApi?: boolean
}

/** A scoped fake model provider on 127.0.0.1 (random port) speaking Responses, Chat Completions, Embeddings and (opt-in) Messages. */
export const makeWith = (serverOptions: FakeServerOptions) => Effect.gen(function*() {
  const server = yield* NodeHttpServer.make(() => createServer(), { port: 0, host: "127.0.0.1" })
  const queue = yield* Ref.make<ReadonlyArray<FakeReply>>([])
  const recorded = yield* SubscriptionRef.make<ReadonlyArray<RecordedRequest>>([])
  const embeddingScript = yield* Ref.make<EmbeddingScript>({})
  const byModel = yield* Ref.make<ReadonlyMap<string, FakeReply>>(new Map())
  const transcriptionScript = yield* Ref.make<TranscriptionScript>({})

  const nextReply = Ref.modify(queue, (replies): [Option.Option<FakeReply>, ReadonlyArray<FakeReply>] =>
    Arr.isNonEmptyReadonlyArray(replies)
      ? [Option.some(Arr.headNonEmpty(replies)), Arr.tailNonEmpty(replies)]
      : [Option.none(), replies]
  )

  const answer = (path: string, body: Record<string, unknown>, count: number) =>
    Effect.gen(function*() {
      const model = typeof body["model"] === "string" ? body["model"] : "fake-model"
      const fixed = (yield* Ref.get(byModel)).get(model)
      const scripted = fixed !== undefined ? Option.some(fixed) : yield* nextReply
      const fallback = serverOptions.fallback
      const reply = Option.isNone(scripted) && fallback !== undefined
        ? Option.some(typeof fallback === "function" ? fallback(body) : fallback)
        : scripted
      if (Option.isNone(reply)) {
        return HttpServerResponse.text(errorJson(500, "fake model server: no scripted reply left"), {
          status: 500,
          contentType: "application/json"
        })
      }
      if (reply.value.delay !== undefined) yield* Effect.sleep(reply.value.delay)
      const r = reply.value
      if (r._tag === "Failure") {
        return HttpServerResponse.text(r.body ?? (r.html === true ? htmlPage(r.status) : errorJson(r.status)), {
          status: r.status,
          contentType: r.html === true ? "text/html; charset=utf-8" : "application/json",
          headers: r.retryAfter === undefined ? {} : { "retry-after": r.retryAfter }
        })
      }
      const stream = body["stream"] === true
      if (path === "/responses") {
        const id = `resp_${count}`
        return stream
          ? sse(responsesEvents(id, model, r.turn), r.cutAfter, r.hangAfter)
          : HttpServerResponse.unsafeJson(responsesBody(id, model, r.turn))
      }
      if (path === "/messages") {
        const id = `msg_${count}`
        return stream
          ? sse(messagesEvents(id, model, r.turn), r.cutAfter, r.hangAfter)
          : HttpServerResponse.unsafeJson(messagesBody(id, model, r.turn))
      }
      const id = `chatcmpl-${count}`
      const options = body["stream_options"]
      const includeUsage = isRecord(options) && options["include_usage"] === true
      return stream
        ? sse(chatEvents(id, model, r.turn, includeUsage), r.cutAfter, r.hangAfter)
        : HttpServerResponse.unsafeJson(chatBody(id, model, r.turn))
    })

  // OpenAI's Whisper API as OpenAI-compatible servers copy it: a multipart form with `file` and `model`, `{ text }` back.
  const transcription = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const contentType = request.headers["content-type"] ?? ""
      const bytes = yield* Effect.orDie(request.arrayBuffer)
      const form = contentType.startsWith("multipart/form-data")
        ? yield* Effect.promise(() => new Response(bytes, { headers: { "content-type": contentType } }).formData().catch(() => undefined))
        : undefined
      const fields: Record<string, string> = {}
      let file: RecordedTranscription["file"] = undefined
      for (const [key, value] of form?.entries() ?? []) {
        if (typeof value === "string") fields[key] = value
        else if (key === "file") {
          file = { name: value.name, type: value.type, bytes: new Uint8Array(yield* Effect.promise(() => value.arrayBuffer())) }
        }
      }
      const recordedForm: RecordedTranscription = { fields, file }
      yield* SubscriptionRef.update(recorded, (rs) => [
        ...rs,
        { method: request.method, path: "/audio/transcriptions", headers: { ...request.headers }, body: recordedForm, media: [] }
      ])
      const invalid = (message: string) =>
        HttpServerResponse.text(JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: null } }), {
          status: 400,
          contentType: "application/json"
        })
      if (request.method !== "POST" || form === undefined) return invalid("expected a multipart/form-data POST")
      if (file === undefined) return invalid("you must provide a file")
      if (fields["model"] === undefined) return invalid("you must provide a model parameter")
      const script = yield* Ref.get(transcriptionScript)
      if (script.delay !== undefined) yield* Effect.sleep(script.delay)
      if (script.status !== undefined) {
        return HttpServerResponse.text(script.html === true ? htmlPage(script.status) : errorJson(script.status), {
          status: script.status,
          contentType: script.html === true ? "text/html; charset=utf-8" : "application/json"
        })
      }
      return HttpServerResponse.unsafeJson({ text: script.text ?? "fake transcript" })
    })

  const app = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = new URL(request.url, "http://fake").pathname.replace(/^\/v1/, "")
    if (path === "/audio/transcriptions") return yield* transcription(request)
    const text = yield* request.text
    const body = Either.getOrUndefined(Either.try(() => JSON.parse(text) as unknown))
    // The provider's own checks of images and files: a shape it would refuse is answered as it answers (400).
    const media = isRecord(body) ? Either.try({ try: () => mediaPartsOf(path, body), catch: (error) => error }) : Either.right([])
    const all = yield* SubscriptionRef.updateAndGet(recorded, (rs) => [
      ...rs,
      {
        method: request.method,
        path,
        headers: { ...request.headers },
        body: serverOptions.record === false ? undefined : body,
        media: Either.getOrElse(media, () => [])
      }
    ])
    if (request.method !== "POST" || !isRecord(body)) {
      return HttpServerResponse.text("expected a JSON POST", { status: 400 })
    }
    if (Either.isLeft(media)) {
      const refused = media.left instanceof MediaRefused ? media.left.message : String(media.left)
      return HttpServerResponse.text(errorJson(400, refused), { status: 400, contentType: "application/json" })
    }
    if (path === "/responses" || path === "/chat/completions" || (path === "/messages" && serverOptions.messagesApi === true)) {
      return yield* answer(path, body, all.length)
    }
    if (path === "/embeddings") {
      const script = yield* Ref.get(embeddingScript)
      if (script.delay !== undefined) yield* Effect.sleep(script.delay)
      if (script.status !== undefined) {
        return HttpServerResponse.text(errorJson(script.status), { status: script.status, contentType: "application/json" })
      }
      const model = typeof body["model"] === "string" ? body["model"] : "fake-embedding"
      const inputs = stringInputs(body["input"])
      if (script.bagOfWords !== undefined) {
        const { dimensions, synonyms } = script.bagOfWords
        return HttpServerResponse.unsafeJson({
          object: "list",
          model,
          data: inputs.map((input, index) => ({ object: "embedding", index, embedding: bagOfWordsEmbedding(input, dimensions, synonyms) })),
          usage: { prompt_tokens: 0, total_tokens: 0 }
        })
      }
      const dimensions = typeof body["dimensions"] === "number" ? body["dimensions"] : 8
      return HttpServerResponse.unsafeJson(embeddingsBody(model, inputs, dimensions))
    }
    return HttpServerResponse.text(errorJson(404, `no route ${path}`), { status: 404, contentType: "application/json" })
  })

  yield* server.serve(app)
  const address = server.address
  const port = address._tag === "TcpAddress" ? address.port : 0

  return FakeModelServer.of({
    baseURL: `http://127.0.0.1:${port}/v1`,
    reply: (...replies) => Ref.update(queue, (queued) => [...queued, ...replies]),
    requests: SubscriptionRef.get(recorded),
    modelRequests: Effect.map(
      SubscriptionRef.get(recorded),
      (all) => all.filter((r) => r.path !== "/embeddings" && r.path !== "/audio/transcriptions")
    ),
    transcriptions: (script) => Ref.set(transcriptionScript, script),
    embeddings: (script) => Ref.set(embeddingScript, script),
    answerModel: (model, reply) =>
      Ref.update(byModel, (map) => {
        const next = new Map(map)
        if (reply === undefined) next.delete(model)
        else next.set(model, reply)
        return next
      }),
    awaitRequests: (count) =>
      recorded.changes.pipe(
        Stream.filter((rs) => rs.length >= count),
        Stream.runHead,
        Effect.map(Option.getOrElse((): ReadonlyArray<RecordedRequest> => []))
      )
  })
})

export const make = makeWith({})

export const layer: Layer.Layer<FakeModelServer, HttpServerError.ServeError> = Layer.scoped(FakeModelServer, make)
