// The model provider's HTTP client: undici's request under @effect/platform's HttpClient interface, lean on purpose.
// @effect/platform-node's undici client costs ~1.65 ms of CPU a streamed model request where undici alone costs ~0.7 ms
// (a 330 KB body, measured in one process, HELPER numbers in the commit): a span and traceparent headers per request,
// a FinalizationRegistry entry, an interrupt wrapper and a Stream pipeline over the body's Readable. A model step has
// its own span (kern.model.streamText), its stop and its watchdog; what it needs of the body is a pull (`pullOf`).
//
// It is an HttpClient all the same: RedactingHttpClient (the one door no known secret passes through in a body), the
// provider's base URL and key, and retryingClient compose over it as over any client, and its errors have the shapes
// @effect/platform's have (RequestError Transport or InvalidUrl, ResponseError Decode), so the providers map them as
// before. Interrupting a request aborts it; a body being read is destroyed when the read is interrupted, and a pulled
// body when its scope closes, read to its end or not.
import {
  Cookies,
  Headers,
  type HttpBody,
  HttpClient,
  HttpClientError,
  type HttpClientRequest,
  HttpClientResponse,
  HttpIncomingMessage,
  UrlParams
} from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeStream from "@effect/platform-node/NodeStream"
import type * as Undici from "@effect/platform-node/Undici"
import { Chunk, Effect, Either, Inspectable, Layer, Option, type Scope, Stream } from "effect"
import type { Readable } from "node:stream"

/** The key of a response's own pull (`pullOf`). */
const ResponsePullId: unique symbol = Symbol.for("kern/model/ModelHttpClient/pull")

/** One pull of a body: the bytes read since the last pull; `Option.none()` in the error channel when it ended. */
export type BodyPull = Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<HttpClientError.ResponseError>>

interface WithPull {
  readonly [ResponsePullId]: Effect.Effect<BodyPull, never, Scope.Scope>
}

/**
 * A pull of the response's body, released with the scope (the body destroyed unless it was read to its end): this
 * client's own for its responses, else over the response's Stream, as any HttpClientResponse gives it.
 */
export const pullOf = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<BodyPull, never, Scope.Scope> =>
  ResponsePullId in response
    ? (response as HttpClientResponse.HttpClientResponse & WithPull)[ResponsePullId]
    : Stream.toPull(response.stream)

/**
 * Pulls over a Readable in paused mode: whatever is buffered, or one wait for the next `readable`, `end` or `error`.
 * No Stream, no queue, no fiber: a streamed answer of a few chunks is a few pulls.
 */
const readablePull = (readable: Readable, onError: (cause: unknown) => HttpClientError.ResponseError): BodyPull => {
  let ended = false
  let failure: Option.Option<unknown> = Option.none()
  let waiting: ((effect: BodyPull) => void) | undefined
  const wake = () => {
    const resume = waiting
    waiting = undefined
    if (resume !== undefined) resume(pull)
  }
  readable.on("readable", wake)
  readable.once("end", () => {
    ended = true
    wake()
  })
  readable.once("error", (cause) => {
    failure = Option.some(cause)
    wake()
  })
  const pull: BodyPull = Effect.suspend(() => {
    if (Option.isSome(failure)) return Effect.fail(Option.some(onError(failure.value)))
    const chunks: Array<Uint8Array> = []
    let chunk: Uint8Array | null
    while ((chunk = readable.read() as Uint8Array | null) !== null) chunks.push(chunk)
    if (chunks.length > 0) return Effect.succeed(Chunk.unsafeFromArray(chunks))
    if (ended || readable.readableEnded) return Effect.fail(Option.none())
    return Effect.async<Chunk.Chunk<Uint8Array>, Option.Option<HttpClientError.ResponseError>>((resume) => {
      waiting = resume
      return Effect.sync(() => {
        waiting = undefined
      })
    })
  })
  return pull
}

const ignoreError = (_: unknown) => {}

/**
 * Whether the end of `readable`'s data has arrived, though its `end` may not have been emitted yet (`readableEnded`
 * waits for a read that finds nothing more): Node's own state, which its public API does not show.
 */
const endArrived = (readable: Readable): boolean =>
  (readable as Readable & { readonly _readableState?: { readonly ended?: boolean } })._readableState?.ended === true

class ModelResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse, WithPull {
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId
  private cachedHeaders: Headers.Headers | undefined
  private cachedCookies: Cookies.Cookies | undefined
  private textBody: Effect.Effect<string, HttpClientError.ResponseError> | undefined

  constructor(readonly request: HttpClientRequest.HttpClientRequest, private readonly source: Undici.Dispatcher.ResponseData) {
    super()
    // An error of a body nobody reads must not be an uncaught exception (as @effect/platform-node's response does).
    source.body.on("error", ignoreError)
  }

  private decodeError(cause: unknown) {
    return new HttpClientError.ResponseError({ request: this.request, response: this, reason: "Decode", cause })
  }

  /** A read of the whole body, which an interrupt ends by destroying the body. */
  private read<A>(read: (body: Undici.Dispatcher.ResponseData["body"]) => Promise<A>): Effect.Effect<A, HttpClientError.ResponseError> {
    return Effect.tryPromise({
      try: (signal) => {
        signal.addEventListener("abort", () => this.source.body.destroy(), { once: true })
        return read(this.source.body)
      },
      catch: (cause) => this.decodeError(cause)
    })
  }

  get status() {
    return this.source.statusCode
  }

  get headers(): Headers.Headers {
    return this.cachedHeaders ??= Headers.fromInput(this.source.headers)
  }

  get cookies(): Cookies.Cookies {
    if (this.cachedCookies !== undefined) return this.cachedCookies
    const header = this.source.headers["set-cookie"]
    return this.cachedCookies = header === undefined ? Cookies.empty : Cookies.fromSetCookie(Array.isArray(header) ? header : [header])
  }

  get remoteAddress(): Option.Option<string> {
    return Option.none()
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    return NodeStream.fromReadable(() => this.source.body, (cause) => this.decodeError(cause))
  }

  get [ResponsePullId](): Effect.Effect<BodyPull, never, Scope.Scope> {
    const body = this.source.body
    return Effect.acquireRelease(
      Effect.sync(() => readablePull(body, (cause) => this.decodeError(cause))),
      () => Effect.sync(() => {
        if (body.readableEnded) return
        // A body whose last bytes have arrived (the answer was read to its last event, the end not yet seen) is read
        // away and ends by itself. Destroyed, undici built a RequestAbortedError and formatted its stack: ~0.3 ms of
        // CPU at every model step. A body still arriving is destroyed, which aborts the request.
        while (body.read() !== null) continue
        if (!endArrived(body)) body.destroy()
      })
    )
  }

  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    // Read once: a second read (a retry's check, then the caller) gets the same text.
    return this.textBody ??= this.read((body) => body.text()).pipe(Effect.cached, Effect.runSync)
  }

  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => (text === "" ? null : JSON.parse(text)) as unknown, catch: (cause) => this.decodeError(cause) }))
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: (cause) => this.decodeError(cause) }))
  }

  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    return this.read((body) => body.formData() as Promise<FormData>)
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    return this.read((body) => body.arrayBuffer())
  }

  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, {
      _id: "@effect/platform/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }
}

/** A request body as undici takes it (as @effect/platform-node's client converts it). */
type UndiciBody = Exclude<Undici.Dispatcher.DispatchOptions["body"], undefined>

const undiciBody = (body: HttpBody.HttpBody): Effect.Effect<UndiciBody> => {
  switch (body._tag) {
    case "Empty":
      return Effect.succeed(null)
    case "Uint8Array":
    case "Raw":
      return Effect.succeed(body.body as Uint8Array)
    case "FormData":
      return Effect.succeed(body.formData as unknown as Undici.FormData)
    case "Stream":
      return NodeStream.toReadable(body.stream)
  }
}

const send = (dispatcher: Undici.Dispatcher, request: HttpClientRequest.HttpClientRequest) =>
  Effect.suspend(() => {
    const url = UrlParams.makeUrl(request.url, request.urlParams, request.hash)
    if (Either.isLeft(url)) {
      return Effect.fail(new HttpClientError.RequestError({ request, reason: "InvalidUrl", cause: url.left }))
    }
    const { hash, origin, pathname, search } = url.right
    return Effect.flatMap(undiciBody(request.body), (body) =>
      Effect.tryPromise({
        // Interrupted before the answer's head came, the request is aborted (the signal).
        try: (signal) =>
          dispatcher.request({
            signal,
            method: request.method,
            headers: request.headers,
            origin,
            path: pathname + search + hash,
            body,
            // As @effect/platform-node's: time is the caller's (the turn's watchdog, Effect timeouts).
            headersTimeout: 60 * 60 * 1000,
            bodyTimeout: 0
          }),
        catch: (cause) => new HttpClientError.RequestError({ request, reason: "Transport", cause })
      })).pipe(Effect.map((source): HttpClientResponse.HttpClientResponse => new ModelResponse(request, source)))
  })

/** The client over one undici dispatcher. */
export const make = (dispatcher: Undici.Dispatcher): HttpClient.HttpClient =>
  HttpClient.makeWith(
    (request) => Effect.flatMap(request, (ready) => send(dispatcher, ready)),
    Effect.succeed as HttpClient.HttpClient.Preprocess<never, never>
  )

/** The client over an undici Agent of its own, closed with the layer. */
export const layer: Layer.Layer<HttpClient.HttpClient> = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(NodeHttpClient.Dispatcher, make)
).pipe(Layer.provide(NodeHttpClient.dispatcherLayer))
