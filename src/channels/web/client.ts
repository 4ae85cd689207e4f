import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Deferred, Duration, Effect, Option, Queue, Schema, Stream, Take } from "effect"
import * as Api from "./api.js"

/** Talking to a running agent failed: not running, refused, or it answered something unexpected. */
export class ClientError extends Schema.TaggedError<ClientError>()("ClientError", {
  reason: Schema.Literal("unreachable", "refused", "unexpected"),
  message: Schema.String
}) {}

export interface ClientSettings {
  /** `http://host:port` */
  readonly baseUrl: string
  readonly token: string
}

const ErrorBody = Schema.parseJson(Api.ErrorResponse)

/**
 * A client of one running agent's HTTP API: what `kern chat`, `kern tui`, `kern open`, `kern start` and
 * `kern status` use when the agent runs in the background. Every call carries the bearer token.
 */
export const make = (settings: ClientSettings) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const url = (path: string) => `${settings.baseUrl}${path}`
    const authorized = (request: HttpClientRequest.HttpClientRequest) => HttpClientRequest.bearerToken(request, settings.token)

    const unreachable = (error: { readonly message: string }) =>
      new ClientError({ reason: "unreachable", message: `the agent at ${settings.baseUrl} does not answer: ${error.message}` })

    /** The answer decoded, or the server's JSON error as a ClientError. */
    const expect = <A, I>(schema: Schema.Schema<A, I>) => (response: HttpClientResponse.HttpClientResponse) =>
      Effect.gen(function*() {
        const text = yield* response.text.pipe(Effect.mapError(unreachable))
        if (response.status >= 200 && response.status < 300) {
          return yield* Schema.decode(Schema.parseJson(schema))(text).pipe(
            Effect.mapError((error) => new ClientError({ reason: "unexpected", message: `unexpected answer from ${settings.baseUrl}: ${error.message}` }))
          )
        }
        const body = Schema.decodeOption(ErrorBody)(text)
        const detail = Option.match(body, { onNone: () => text.slice(0, 200), onSome: (b) => b.error })
        return yield* new ClientError({ reason: "refused", message: `${response.status}: ${detail}` })
      })

    const call = <A, I>(request: HttpClientRequest.HttpClientRequest, schema: Schema.Schema<A, I>, timeout = Duration.seconds(10)) =>
      http.execute(authorized(request)).pipe(
        Effect.mapError(unreachable),
        Effect.flatMap(expect(schema)),
        Effect.scoped,
        Effect.timeoutFail({ duration: timeout, onTimeout: () => unreachable({ message: `no answer in ${Duration.format(timeout)}` }) }),
        Effect.withSpan("kern.web.client.call", { attributes: { url: request.url } })
      )

    const health = call(HttpClientRequest.get(url("/health")), Api.HealthResponse, Duration.seconds(2))
    const status = call(HttpClientRequest.get(url("/status")), Api.StatusResponse)
    const ticket = call(HttpClientRequest.post(url("/auth/ticket")), Api.TicketResponse)
    const newSession = call(HttpClientRequest.post(url("/sessions")), Api.NewSessionResponse)
    const approvals = call(HttpClientRequest.get(url("/approvals")), Api.ApprovalsResponse)
    const decide = (id: string, approved: boolean) =>
      call(
        HttpClientRequest.post(url(`/approvals/${encodeURIComponent(id)}`)).pipe(HttpClientRequest.bodyUnsafeJson({ approved })),
        Api.ApprovalDecisionResponse
      )
    const send = (message: Api.MessageRequest) =>
      call(HttpClientRequest.post(url("/message")).pipe(HttpClientRequest.bodyUnsafeJson(message)), Api.MessageAccepted)

    /**
     * Subscribes to `/events` and returns once the server has the subscription (its `: connected` comment), so a
     * message sent after this is never missed. The stream ends when the connection does; it lives in the scope.
     */
    const events = (lastId: Option.Option<number> = Option.none()) =>
      Effect.gen(function*() {
        const queue = yield* Effect.acquireRelease(Queue.unbounded<Take.Take<Api.AgentEvent, ClientError>>(), Queue.shutdown)
        const connected = yield* Deferred.make<void, ClientError>()
        const request = HttpClientRequest.get(url("/events")).pipe(
          HttpClientRequest.setHeader("accept", "text/event-stream"),
          Option.match(lastId, { onNone: () => (r: HttpClientRequest.HttpClientRequest) => r, onSome: (id) => HttpClientRequest.setHeader("last-event-id", String(id)) })
        )
        const frames = Stream.unwrapScoped(Effect.gen(function*() {
          const response = yield* http.execute(authorized(request)).pipe(Effect.mapError(unreachable))
          if (response.status !== 200) return yield* expect(Schema.Unknown)(response).pipe(Effect.as(Stream.empty))
          return response.stream.pipe(Stream.mapError(unreachable), Stream.decodeText(), Stream.splitLines)
        }))
        const pump = frames.pipe(
          parseSse,
          Stream.runForEach((item) =>
            item === "connected" ? Deferred.succeed(connected, undefined) : Queue.offer(queue, Take.of(item))
          ),
          Effect.matchEffect({
            onFailure: (error) => Effect.zipRight(Deferred.fail(connected, error), Queue.offer(queue, Take.fail(error))),
            onSuccess: () =>
              Effect.zipRight(
                Deferred.fail(connected, new ClientError({ reason: "unexpected", message: "the event stream ended before it began" })),
                Queue.offer(queue, Take.end)
              )
          })
        )
        yield* Effect.forkScoped(pump)
        yield* Deferred.await(connected)
        return Stream.fromQueue(queue).pipe(Stream.flattenTake)
      })

    return { baseUrl: settings.baseUrl, health, status, ticket, newSession, send, events, approvals, decide } as const
  })

export type AgentClient = Effect.Effect.Success<ReturnType<typeof make>>

const decodeEvent = Schema.decodeUnknownOption(Api.AgentEventJson)

/**
 * SSE lines into events: `data:` lines gathered until a blank line; comments skipped, except the server's
 * `: connected`, passed on as a marker. A frame that does not decode (a newer server's event type) is skipped.
 */
export const parseSse = <E, R>(lines: Stream.Stream<string, E, R>): Stream.Stream<Api.AgentEvent | "connected", E, R> =>
  lines.pipe(
    Stream.mapAccum([] as ReadonlyArray<string>, (data, line): readonly [ReadonlyArray<string>, Option.Option<Api.AgentEvent | "connected">] => {
      if (line === ": connected") return [data, Option.some("connected")]
      if (line.startsWith(":")) return [data, Option.none()]
      if (line.startsWith("data:")) return [[...data, line.slice(line.startsWith("data: ") ? 6 : 5)], Option.none()]
      if (line === "" && data.length > 0) return [[], decodeEvent(data.join("\n"))]
      return [data, Option.none()]
    }),
    Stream.filterMap((item) => item)
  )
