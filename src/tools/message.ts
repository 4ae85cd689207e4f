import { Effect, Option, PubSub, Schema } from "effect"
import { type ChannelError, Channels, pairedInterfaces } from "./Channels.js"
import { linkMedia } from "../media/mediaLinks.js"
import type { Attachment } from "../session/messages.js"
import { resolveFile } from "./messageFile.js"
import { confinedAudience } from "../kernel/Audience.js"
import { RunContext } from "../kernel/RunContext.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { conversationOfChat } from "../session/conversationIds.js"
import { PairingStore, userKey } from "../users/PairingStore.js"
import type { ToolMetadata } from "./toolMetadata.js"

export const MessageArgs = Schema.Struct({
  userId: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "the user's id on their channel, as USERS.md or kern users lists it (the part after telegram: or slack:); " +
      "leave userId and interface out to send a file into this chat"
  })),
  interface: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: `their channel: ${[...pairedInterfaces].join(" or ")}`
  })),
  text: Schema.String.pipe(Schema.maxLength(20_000)).annotations({
    description: "what to send (markdown); long text is split into several messages; with a file, its caption (may be empty)"
  }),
  file: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "a file to send: a workspace path (e.g. reports/week.pdf), a media id (med_…) of a file in this " +
      "conversation, or an artifact id (art_…); images go as photos, anything else as a document"
  }))
})
export type MessageArgs = typeof MessageArgs.Type

export const messageTool: ToolMetadata = {
  toolId: "message",
  name: "Message",
  description: "Send a message, unprompted, to a paired user over their channel, e.g. " +
    "{ userId: \"12345\", interface: \"telegram\", text: \"The build is green.\" }. The user must be paired and their " +
    "channel connected. To answer the message you are replying to, just reply: this is for reaching someone else. " +
    "With `file` it sends a file (a workspace path, med_… or art_…), e.g. { userId, interface, text: \"the report\", " +
    "file: \"reports/week.pdf\" }; to attach a file to your reply here, leave userId and interface out: " +
    "{ text: \"here it is\", file: \"chart.png\" } sends it into this chat.",
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
    const channels = yield* Channels
    const ctx = yield* RunContext
    if (args.text === "" && args.file === undefined) {
      return yield* toolFailure("VALIDATION_ERROR", "nothing to send: give a text, a file, or both; the message was not sent")
    }
    if (args.userId === undefined && args.interface === undefined) return yield* toThisChat(args)
    if (args.userId === undefined || args.interface === undefined) {
      return yield* toolFailure("VALIDATION_ERROR", "give both userId and interface (someone else), or neither (this chat); the message was not sent")
    }
    return yield* toPairedUser({ ...args, userId: args.userId, interface: args.interface })
  }).pipe(Effect.withSpan("kern.tools.message"))

/** A file into the chat the run serves: its channel's upload, or for the web UI and terminal the outgoing event. */
const toThisChat = (args: MessageArgs) =>
  Effect.gen(function*() {
    const channels = yield* Channels
    const ctx = yield* RunContext
    const here = ctx.audience
    if (here === undefined) {
      return yield* toolFailure("VALIDATION_ERROR", "this run has no chat of its own: name userId and interface; the message was not sent")
    }
    if (args.file === undefined) {
      return yield* toolFailure("VALIDATION_ERROR", "to answer in this chat just reply; message without userId and interface sends a file here; the message was not sent")
    }
    const resolved = yield* resolveFile(args.file)
    if (pairedInterfaces.has(here.interface)) {
      const channel = yield* channels.get(here.interface)
      if (Option.isNone(channel)) {
        return yield* toolFailure("PERMISSION_DENIED", `the ${here.interface} channel is not running here; the message was not sent`)
      }
      yield* channel.value.sendFile(here.channel, resolved.file, args.text).pipe(Effect.mapError(sendFailure))
    }
    yield* linked(resolved.attachment, here.conversationId)
    yield* PubSub.publish(channels.outgoing, {
      interface: here.interface,
      channel: here.channel,
      userId: here.userId,
      text: args.text,
      attachment: resolved.attachment
    })
    return { sent: true, to: "this chat", file: attachmentShown(resolved.attachment) }
  })

const sendFailure = (error: ChannelError) =>
  toolFailure(error.reason === "network" ? "NETWORK_ERROR" : "PERMISSION_DENIED", `${error.message}; the message was not sent`)

/** The file's reference in the tool's result: how the session and the web UI's history find it again. */
const attachmentShown = (attachment: Attachment) =>
  ({ id: attachment.id, name: attachment.name, mediaType: attachment.mediaType, kind: attachment.kind, bytes: attachment.bytes })

const linked = (attachment: Attachment, conversation: string) =>
  linkMedia([attachment.id], conversation).pipe(
    Effect.mapError((error) => toolFailure("UNEXPECTED", `the file was sent but not recorded for its conversation: ${error.message}`))
  )

const toPairedUser = (args: MessageArgs & { readonly userId: string; readonly interface: string }) =>
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
    if (args.file === undefined) {
      yield* channel.value.send(found.chatId, args.text).pipe(Effect.mapError(sendFailure))
      yield* PubSub.publish(channels.outgoing, { interface: found.interface, channel: found.chatId, userId: found.userId, text: args.text })
      return { sent: true, to: id, chars: args.text.length }
    }
    const resolved = yield* resolveFile(args.file)
    yield* channel.value.sendFile(found.chatId, resolved.file, args.text).pipe(Effect.mapError(sendFailure))
    yield* linked(resolved.attachment, conversationOfChat(found.interface, found.chatId))
    yield* PubSub.publish(channels.outgoing, {
      interface: found.interface,
      channel: found.chatId,
      userId: found.userId,
      text: args.text,
      attachment: resolved.attachment
    })
    return { sent: true, to: id, chars: args.text.length, file: attachmentShown(resolved.attachment) }
  })
