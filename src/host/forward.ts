import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect } from "effect"
import type * as NodeHttp from "node:http"
import * as NodeHttpClient from "node:http"
import { errorResponse } from "../channels/web/ApiError.js"

/**
 * A request for an agent another runner holds, passed on to that runner's HTTP server as it came (method, target,
 * headers, body), its answer streamed back as it comes (an event stream too). Proxied rather than redirected: a
 * redirect to another origin drops the client's Authorization header and its browser session cookie (scoped to this
 * origin), and a client behind one address (a load balancer) need not know the runners. The holder runs the request
 * through its own door and the agent's own gate: nothing is decided here. `x-kern-forwarded` marks it so a runner
 * that no longer holds the agent (it is moving) answers 503 instead of passing it on again.
 */
export const forwardedHeader = "x-kern-forwarded"

/** Hop-by-hop headers (RFC 9110 7.6.1) and the Host, which names this server, not the holder. */
const notForwarded = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer", "host"])

const kept = (headers: NodeHttp.IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !notForwarded.has(name.toLowerCase())))

export const forward = (base: string, request: HttpServerRequest.HttpServerRequest) =>
  Effect.async<HttpServerResponse.HttpServerResponse>((resume) => {
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const target = new URL(base)
    const outgoing = NodeHttpClient.request({
      host: target.hostname,
      port: target.port,
      method: request.method,
      path: incoming.url ?? request.url,
      // The request's headers as the host left them (its own session cookie taken out), not the raw ones.
      headers: { ...kept(request.headers), host: target.host, [forwardedHeader]: "1" }
    }, (response) => {
      const { "content-type": contentType, "content-length": _length, ...rest } = kept(response.headers)
      resume(Effect.succeed(HttpServerResponse.stream(
        NodeStream.fromReadable(() => response, (error) => error),
        {
          status: response.statusCode ?? 502,
          headers: rest as Record<string, string>,
          ...(typeof contentType === "string" ? { contentType } : {})
        }
      )))
    })
    outgoing.on("error", (error) =>
      resume(Effect.succeed(errorResponse(502, { error: `the runner holding this agent (${target.host}) did not answer: ${error.message}` }))))
    incoming.pipe(outgoing)
    // The client went away: so does the request to the holder.
    return Effect.sync(() => outgoing.destroy())
  }).pipe(Effect.withSpan("kern.host.forward", { attributes: { to: base } }))
