import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Stream } from "effect"
import { AgentRuntime } from "../../../runtime/AgentRuntime.js"
import { Questions } from "../../../tools/Questions.js"
import { heartbeatInterface } from "../../../turn/MessageQueue.js"
import { subagentInterface } from "../../../kernel/Audience.js"
import { MessageRequest } from "../api.js"
import { badRequest, InsufficientStorage, Unavailable } from "../ApiError.js"
import { EventHub } from "../EventHub.js"
import { KernApi } from "../KernApi.js"
import { readBody } from "../readBody.js"
import { ServerInfo } from "../ServerInfo.js"
import { parseLastEventId, sseFrames } from "../sse.js"

/** Messages in, events out. */
export const layer = HttpApiBuilder.group(KernApi, "conversation", (handlers) =>
  Effect.gen(function*() {
    const runtime = yield* AgentRuntime
    const hub = yield* EventHub
    const server = yield* ServerInfo
    const questions = yield* Questions
    return handlers
      // Raw: the body is read here, counted against the cap and checked for depth before it is parsed.
      .handleRaw("send", ({ request }) =>
        Effect.gen(function*() {
          const body = yield* readBody(request, MessageRequest, server.bodyLimitBytes)
          if (body.text.trim() === "") return yield* badRequest("text", "text: must not be empty")
          const iface = body.interface ?? "web"
          if (iface.trim() === "" || iface === heartbeatInterface || iface === subagentInterface) {
            return yield* badRequest("interface", `interface: "${iface}" is not a channel a message can come from`)
          }
          const channel = body.channel ?? "web"
          if (channel.trim() === "") return yield* badRequest("channel", "channel: must not be empty")
          const queued = yield* runtime.submit({ interface: iface, channel, userId: "operator", text: body.text }).pipe(
            // 507 Insufficient Storage when kern.db's disk is full: the client is told plainly, and may send it again later.
            Effect.mapError((error) =>
              error.reason === "disk-full"
                ? new InsufficientStorage({ error: `not accepted: ${error.message}` })
                : new Unavailable({ error: `not accepted: ${error.message}` })
            )
          )
          return { turnId: queued.turnId }
        }))
      .handle("events", ({ headers, urlParams }) =>
        Effect.sync(() => {
          const lastId = Option.orElse(parseLastEventId(headers["last-event-id"]), () => parseLastEventId(urlParams.lastEventId))
          const encoder = new TextEncoder()
          // A client that shows questions (`?questions=web`: the web UI; `?questions=terminal`: an attached kern tui) is a
          // surface for that interface's turns while its stream is open.
          const shows = urlParams.questions === undefined ? Effect.void : questions.showOn(urlParams.questions)
          const body = Stream.unwrapScoped(Effect.zipRight(shows, sseFrames(hub, lastId))).pipe(Stream.map((frame) => encoder.encode(frame)))
          return HttpServerResponse.stream(body, {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
          })
        }))
  }))
