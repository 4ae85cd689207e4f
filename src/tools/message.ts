import { Effect, Option, PubSub, Schema } from "effect"
import { Channels, pairedInterfaces } from "./Channels.js"
import { confinedAudience } from "../kernel/Audience.js"
import { RunContext } from "../kernel/RunContext.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { conversationOfChat } from "../session/conversationIds.js"
import { PairingStore, userKey } from "../users/PairingStore.js"
import type { ToolMetadata } from "./toolMetadata.js"

export const MessageArgs = Schema.Struct({
  userId: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "the user's id on their channel, as USERS.md or kern users lists it (the part after telegram: or slack:)"
  }),
  interface: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: `their channel: ${[...pairedInterfaces].join(" or ")}`
  }),
  text: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20_000)).annotations({
    description: "what to send (markdown); long text is split into several messages"
  })
})
export type MessageArgs = typeof MessageArgs.Type

export const messageTool: ToolMetadata = {
  toolId: "message",
  name: "Message",
  description: "Send a message, unprompted, to a paired user over their channel, e.g. " +
    "{ userId: \"12345\", interface: \"telegram\", text: \"The build is green.\" }. The user must be paired and their " +
    "channel connected. To answer the message you are replying to, just reply: this is for reaching someone else.",
  safetyClass: "NETWORK",
  idempotent: false,
  timeoutMs: 30_000,
  scope: "write"
}

/**
 * A proactive send: to an approved user only, to the chat their pairing recorded, over a channel that is running.
 * Everyone watching (web UI, terminal) sees it as an `outgoing` event.
 */
export const message = (args: MessageArgs) =>
  Effect.gen(function*() {
    const pairings = yield* PairingStore
    const channels = yield* Channels
    const ctx = yield* RunContext
    if (!pairedInterfaces.has(args.interface)) {
      return yield* toolFailure(
        "VALIDATION_ERROR",
        `unknown interface ${JSON.stringify(args.interface)}: message reaches paired users over ` +
          `${[...pairedInterfaces].join(" or ")}; the message was not sent`
      )
    }
    const id = userKey({ interface: args.interface, userId: args.userId })
    // A non-operator's conversation reaches its own chat only; whether another user exists is not its business either.
    const own = confinedAudience(ctx)
    const notOwn = () =>
      toolFailure(
        "PERMISSION_DENIED",
        `in this conversation the message tool reaches only this chat (${own?.interface} ${own?.channel}), not ${id}; ` +
          "only the operator's conversation messages other users; the message was not sent"
      )
    const found = yield* pairings.find(id).pipe(
      Effect.catchTag("PairingError", (error) =>
        Effect.fail(
          error.reason === "storage"
            ? toolFailure("UNEXPECTED", error.message)
            : own !== undefined
            ? notOwn()
            : toolFailure("NOT_FOUND", `${error.message}; the message was not sent`)
        ))
    )
    if (own !== undefined && conversationOfChat(found.interface, found.chatId) !== own.conversationId) return yield* notOwn()
    if (found.status !== "approved") {
      return yield* toolFailure("PERMISSION_DENIED", `${id} has not been paired yet (their code waits for kern pair); the message was not sent`)
    }
    const channel = yield* channels.get(found.interface)
    if (Option.isNone(channel)) {
      return yield* toolFailure("PERMISSION_DENIED", `the ${found.interface} channel is not running here (no token configured); the message was not sent`)
    }
    const status = yield* channel.value.status
    if (status.state !== "connected") {
      return yield* toolFailure(
        "PERMISSION_DENIED",
        `the ${found.interface} channel is not connected (${status.state}${status.detail === "" ? "" : `: ${status.detail}`}); the message was not sent`
      )
    }
    yield* channel.value.send(found.chatId, args.text).pipe(
      Effect.mapError((error) =>
        toolFailure(error.reason === "network" ? "NETWORK_ERROR" : "PERMISSION_DENIED", `${error.message}; the message was not sent`))
    )
    yield* PubSub.publish(channels.outgoing, { interface: found.interface, channel: found.chatId, userId: found.userId, text: args.text })
    return { sent: true, to: id, chars: args.text.length }
  }).pipe(Effect.withSpan("kern.tools.message"))
