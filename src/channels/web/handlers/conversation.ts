import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Stream } from "effect"
import { ingestFiles } from "../../../media/ingestFiles.js"
import { MediaStore } from "../../../media/MediaStore.js"
import { AgentRuntime } from "../../../runtime/AgentRuntime.js"
import { Questions } from "../../../tools/Questions.js"
import { heartbeatInterface } from "../../../turn/MessageQueue.js"
import { subagentInterface } from "../../../kernel/Audience.js"
import { fileInfo } from "../../AgentEvent.js"
import { MessageRequest } from "../api.js"
import { badRequest, InsufficientStorage, PayloadTooLarge, Unavailable } from "../ApiError.js"
import { EventHub } from "../EventHub.js"
import { KernApi } from "../KernApi.js"
import { readBody } from "../readBody.js"
import { ServerInfo } from "../ServerInfo.js"
import { parseLastEventId, sseFrames } from "../sse.js"

const base64 = /^[A-Za-z0-9+/]*={0,2}$/

/** Base64 bytes (RFC 4648), or none when the text is not base64: Buffer would skip what it cannot read. */
const decodeBase64 = (data: string): Option.Option<Uint8Array> =>
  base64.test(data) && data.length % 4 !== 1 ? Option.some(new Uint8Array(Buffer.from(data, "base64"))) : Option.none()

/** Messages in, events out. */
export const layer = HttpApiBuilder.group(KernApi, "conversation", (handlers) =>
  Effect.gen(function*() {
    const runtime = yield* AgentRuntime
    const hub = yield* EventHub
    const server = yield* ServerInfo
    const questions = yield* Questions
    const media = yield* MediaStore
    return handlers
      // Raw: the body is read here, counted against the cap and checked for depth before it is parsed.
      .handleRaw("send", ({ request }) =>
        Effect.gen(function*() {
          const body = yield* readBody(request, MessageRequest, server.messageBodyLimitBytes)
          const files = body.files ?? []
          if (body.text.trim() === "" && files.length === 0) return yield* badRequest("text", "text: must not be empty")
          const iface = body.interface ?? "web"
          if (iface.trim() === "" || iface === heartbeatInterface || iface === subagentInterface) {
            return yield* badRequest("interface", `interface: "${iface}" is not a channel a message can come from`)
          }
          const channel = body.channel ?? "web"
          if (channel.trim() === "") return yield* badRequest("channel", "channel: must not be empty")
          const incoming = yield* Effect.forEach(files, (file, index) =>
            Option.match(decodeBase64(file.data), {
              onNone: () => Effect.fail(badRequest(`files`, `files[${index}].data: not base64`)),
              onSome: (bytes) => Effect.succeed({ name: file.name, bytes })
            }))
          const attachments = yield* ingestFiles(incoming).pipe(
            Effect.provideService(MediaStore, media),
            Effect.mapError((rejected) =>
              rejected.reason === "too-large" || rejected.reason === "turn-too-large"
                ? new PayloadTooLarge({ error: rejected.message, field: "files" })
                : rejected.reason === "not-stored"
                ? new InsufficientStorage({ error: rejected.message })
                : badRequest("files", rejected.message)
            )
          )
          const message = { interface: iface, channel, userId: "operator", text: body.text }
          const queued = yield* runtime.submit(attachments.length === 0 ? message : { ...message, attachments }).pipe(
            // 507 Insufficient Storage when kern.db's disk is full: the client is told plainly, and may send it again later.
            Effect.mapError((error) =>
              error.reason === "disk-full"
                ? new InsufficientStorage({ error: `not accepted: ${error.message}` })
                : new Unavailable({ error: `not accepted: ${error.message}` })
            )
          )
          if (attachments.length === 0) return { turnId: queued.turnId }
          return { turnId: queued.turnId, files: attachments.map(fileInfo) }
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
