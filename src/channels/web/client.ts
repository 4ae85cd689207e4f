import { HttpApiClient, HttpApiError, HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Deferred, Duration, Effect, Option, ParseResult, Queue, Schema, Stream, Take } from "effect"
import * as Api from "./api.js"
import { type ApiError, apiErrorStatus } from "./ApiError.js"
import { KernApi, type questionShowers } from "./KernApi.js"

/**
 * Talking to a running agent failed: not running, refused, or it answered something unexpected. The message is a
 * sentence for a person (the agent's own, when it refused); the HTTP status, when there was one, is `status`.
 */
export class ClientError extends Schema.TaggedError<ClientError>()("ClientError", {
  reason: Schema.Literal("unreachable", "refused", "unexpected"),
  message: Schema.String,
  status: Schema.optional(Schema.Int)
}) {}

export interface ClientSettings {
  /** `http://host:port` */
  readonly baseUrl: string
  readonly token: string
  /**
   * How long /health may take (2 s by default). A hosted agent asleep under `kern serve` is woken by the request, and
   * a wake cut short by the client's timeout is given up by the host; so a client waking one waits longer.
   */
  readonly healthTimeout?: Duration.DurationInput | undefined
}

const ErrorBody = Schema.parseJson(Api.ErrorResponse)

/** What a call of the derived client can fail with: a declared error, a transport failure, an answer that does not decode. */
type CallError = ApiError | HttpApiError.HttpApiDecodeError | HttpClientError.HttpClientError | ParseResult.ParseError

/**
 * A client of one running agent's HTTP API: what `kern chat`, `kern tui`, `kern open`, `kern start` and
 * `kern status` use when the agent runs in the background. Its calls are derived from KernApi (HttpApiClient), so a
 * route, body or answer that changes on the server changes here too; only the event stream is read by hand. Every
 * call carries the bearer token.
 */
export const make = (settings: ClientSettings) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const authorized = (request: HttpClientRequest.HttpClientRequest) => HttpClientRequest.bearerToken(request, settings.token)
    const api = yield* HttpApiClient.make(KernApi, {
      baseUrl: settings.baseUrl,
      transformClient: HttpClient.mapRequest(authorized)
    })

    const unreachable = (error: { readonly message: string }) =>
      new ClientError({ reason: "unreachable", message: `the agent at ${settings.baseUrl} does not answer: ${error.message}` })

    /** A non-2xx answer as the server's own `{ error }`, or the start of its text. */
    const refusedBy = (response: HttpClientResponse.HttpClientResponse) =>
      response.text.pipe(
        Effect.orElseSucceed(() => ""),
        Effect.map((text) => {
          const message = Option.match(Schema.decodeOption(ErrorBody)(text), {
            onNone: () => `the agent at ${settings.baseUrl} refused the request (HTTP ${response.status}): ${text.slice(0, 200)}`,
            onSome: (body) => body.error
          })
          return new ClientError({ reason: "refused", message, status: response.status })
        })
      )

    const clientError = (error: CallError): Effect.Effect<ClientError> => {
      switch (error._tag) {
        case "RequestError":
          return Effect.succeed(unreachable(error))
        case "ResponseError":
          // A status the contract does not declare for this route.
          return refusedBy(error.response)
        case "ParseError":
          return Effect.succeed(new ClientError({ reason: "unexpected", message: `unexpected answer from ${settings.baseUrl}: ${error.message}` }))
        case "HttpApiDecodeError":
          return Effect.succeed(
            new ClientError({ reason: "refused", message: `the agent could not read the request: ${error.message}`, status: 400 })
          )
        default:
          // The agent's own sentence ("no approval apr_… is waiting"), never a bare status.
          return Effect.succeed(new ClientError({ reason: "refused", message: error.error, status: apiErrorStatus(error) }))
      }
    }

    const call = <A>(name: string, effect: Effect.Effect<A, CallError>, timeout = Duration.seconds(10)) =>
      effect.pipe(
        Effect.catchAll((error) => Effect.flatMap(clientError(error), Effect.fail)),
        Effect.timeoutFail({ duration: timeout, onTimeout: () => unreachable({ message: `no answer in ${Duration.format(timeout)}` }) }),
        Effect.withSpan("kern.web.client.call", { attributes: { route: name, baseUrl: settings.baseUrl } })
      )

    const health = call("health", api.open.health(), Duration.decode(settings.healthTimeout ?? Duration.seconds(2)))
    const status = call("status", api.status.status())
    const mcpTools = (server: string) => call("mcpTools", api.status.mcpTools({ urlParams: { server } }), Duration.seconds(60))
    const ticket = call("ticket", api.auth.ticket())
    const newSession = call("newSession", api.sessions.create())
    /** Stops every running turn, as the operator: the ids of those it stopped. */
    const stopTurns = call("stopAll", api.turns.stopAll())
    const approvals = call("approvals", api.approvals.list())
    const decide = (id: string, approved: boolean) => call("decide", api.approvals.decide({ path: { id }, payload: { approved } }))
    const answer = (id: string, reply: { readonly choices: ReadonlyArray<number>; readonly text?: string }) =>
      call("answer", api.questions.answer({ path: { id }, payload: reply }))
    // Files are stored and read (a PDF's text, a voice note's transcript) before the message is accepted: minutes, not seconds.
    const send = (message: Api.MessageRequest) =>
      call("send", api.conversation.send({ payload: message }), (message.files ?? []).length > 0 ? Duration.minutes(5) : undefined)

    /**
     * Subscribes to `/events` and returns once the server has the subscription (its `: connected` comment), so a
     * message sent after this is never missed. The stream ends when the connection does; it lives in the scope.
     */
    /** `shows`: the interface whose turns' questions this client shows (an attached terminal's), so they are asked. */
    const events = (lastId: Option.Option<number> = Option.none(), shows?: typeof questionShowers[number]) =>
      Effect.gen(function*() {
        const queue = yield* Effect.acquireRelease(Queue.unbounded<Take.Take<Api.AgentEvent, ClientError>>(), Queue.shutdown)
        const connected = yield* Deferred.make<void, ClientError>()
        const request = HttpClientRequest.get(`${settings.baseUrl}/events`).pipe(
          HttpClientRequest.setHeader("accept", "text/event-stream"),
          shows === undefined ? (r: HttpClientRequest.HttpClientRequest) => r : HttpClientRequest.setUrlParam("questions", shows),
          Option.match(lastId, { onNone: () => (r: HttpClientRequest.HttpClientRequest) => r, onSome: (id) => HttpClientRequest.setHeader("last-event-id", String(id)) })
        )
        const frames = Stream.unwrapScoped(Effect.gen(function*() {
          const response = yield* http.execute(authorized(request)).pipe(Effect.mapError(unreachable))
          if (response.status !== 200) return yield* Effect.flatMap(refusedBy(response), Effect.fail)
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

    return { baseUrl: settings.baseUrl, health, status, mcpTools, ticket, newSession, stopTurns, send, events, approvals, decide, answer } as const
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
