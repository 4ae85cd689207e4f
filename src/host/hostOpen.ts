import { Headers, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import type { AgentHandle } from "./AgentHandle.js"

export class HostOpenError extends Schema.TaggedError<HostOpenError>()("HostOpenError", {
  name: Schema.String,
  message: Schema.String
}) {}

const TicketAnswer = Schema.parseJson(Schema.Struct({ ticket: Schema.String }))

const bodyText = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  const body = response.body
  if (body._tag === "Uint8Array") return new TextDecoder().decode(body.body)
  if (body._tag === "Raw" && typeof body.body === "string") return body.body
  return undefined
}

/**
 * A host session opens an agent's UI without the agent's token, through the agent's own login and nothing else: the
 * host asks the agent's app for a login ticket with the agent's token (`POST /auth/ticket`, as `kern open` does; the
 * token never leaves the server), and answers with the agent's `/auth?ticket=…`, where the page goes next: that
 * exchange makes the agent's session cookie (scoped to `/agents/<name>/`) and sends it on to the agent's page. The
 * ticket works once, for a minute, and is spent by that very visit. The caller has checked the host session and the
 * write's Origin; the page asks with fetch, since a form's navigation carries `Origin: null` under the servers'
 * `Referrer-Policy: no-referrer`.
 * `request` is the browser's POST; the ticket request is derived from it (same method and connection), with the
 * agent's token as its only credential.
 */
export const openAgent = (handle: AgentHandle, token: string, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const failed = (message: string) => new HostOpenError({ name: handle.name, message: `could not open ${handle.name}: ${message}` })
    const ticketRequest = request.modify({
      url: "/auth/ticket",
      headers: Headers.fromInput({ authorization: `Bearer ${token}`, accept: "application/json", "content-length": "0" })
    })
    const answer = yield* handle.serve(ticketRequest).pipe(Effect.mapError((error) => failed(error.message)))
    const text = bodyText(answer)
    if (answer.status !== 200 || text === undefined) return yield* failed(`its login answered ${answer.status}`)
    const decoded = Schema.decodeUnknownEither(TicketAnswer)(text)
    if (Either.isLeft(decoded)) return yield* failed("its login answered without a ticket")
    return HttpServerResponse.unsafeJson(
      { url: `/agents/${handle.name}/auth?ticket=${encodeURIComponent(decoded.right.ticket)}` },
      { status: 200, headers: { "cache-control": "no-store" } }
    )
  }).pipe(Effect.withSpan("kern.host.open", { attributes: { agent: handle.name } }))
