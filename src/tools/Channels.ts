import type { Attachment } from "../session/messages.js"
import { Clock, Context, Effect, Layer, LogLevel, Option, PubSub, Ref, Schema, type Scope } from "effect"

/** kern's chat channels, each with the variables it needs set to run (its layer stays off without them). */
export const chatChannelTokens = {
  telegram: ["TELEGRAM_BOT_TOKEN"],
  slack: ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"]
} as const satisfies Readonly<Record<string, ReadonlyArray<string>>>

/**
 * The chat channels whose users are strangers until paired (kern pair): a message from one of them runs with that
 * user's paired tool scope, never the operator's.
 */
export const pairedInterfaces: ReadonlySet<string> = new Set(Object.keys(chatChannelTokens))

/** Where a chat channel is: trying to reach its peer, serving, retrying after a failure, or stopped for good. */
export const ChannelState = Schema.Literal("connecting", "connected", "reconnecting", "stopped")
export type ChannelState = typeof ChannelState.Type

export class ChannelStatus extends Schema.Class<ChannelStatus>("ChannelStatus")({
  /** `telegram`, `slack`: the interface name messages and users carry. */
  interface: Schema.String,
  state: ChannelState,
  /** Why it is reconnecting or stopped (the peer's own words where it gave any); empty when connected. */
  detail: Schema.String,
  sinceMs: Schema.Number
}) {}

export class ChannelError extends Schema.TaggedError<ChannelError>()("ChannelError", {
  interface: Schema.String,
  reason: Schema.Literal("not_connected", "rejected", "network", "unauthorized"),
  message: Schema.String
}) {}

/** A file a channel sends: its bytes, the name it is shown by, and its type as sniffed when it was stored or read. */
export interface OutgoingFile {
  readonly name: string
  readonly bytes: Uint8Array
  readonly mediaType: string
}

/** A message a channel sent on its own (the message tool), not as a turn's reply. */
export interface Outgoing {
  readonly interface: string
  readonly channel: string
  readonly userId: string
  readonly text: string
  /** The file it carried, by its media store reference. */
  readonly attachment?: Attachment | undefined
}

/**
 * One chat channel (Telegram, Slack) as the rest of kern sees it. Its layer receives messages into the runtime's
 * inbox, delivers each turn's reply to the chat it came from and asks its operators for approvals; what others may
 * ask of it is its status and a proactive send.
 */
export interface Channel {
  readonly interface: string
  readonly status: Effect.Effect<ChannelStatus>
  /** Sends `text` to a chat, unprompted: split and formatted as replies are. */
  readonly send: (chatId: string, text: string) => Effect.Effect<void, ChannelError>
  /** Sends a file to a chat, `caption` (markdown) with it: a photo or a document on Telegram, an upload on Slack. */
  readonly sendFile: (chatId: string, file: OutgoingFile, caption: string) => Effect.Effect<void, ChannelError>
}

export interface ChannelsShape {
  /** Adds a channel for the life of the caller's scope. */
  readonly register: (channel: Channel) => Effect.Effect<void, never, Scope.Scope>
  readonly get: (iface: string) => Effect.Effect<Option.Option<Channel>>
  /** Every registered channel's status, by interface name. */
  readonly statuses: Effect.Effect<ReadonlyArray<ChannelStatus>>
  /** Proactive messages sent through any channel, for the web stream and the terminal. */
  readonly outgoing: PubSub.PubSub<Outgoing>
}

/**
 * The chat channels that are running: each channel's layer registers itself here while it is up. The registry sits with
 * the tools that send through it and report on it (message, kern); src/channels registers into it.
 */
export class Channels extends Context.Tag("kern/channels/Channels")<Channels, ChannelsShape>() {}

export const make = Effect.gen(function*() {
  const channels = yield* Ref.make(new Map<string, Channel>())
  const outgoing = yield* PubSub.unbounded<Outgoing>()
  const register = (channel: Channel) =>
    Effect.acquireRelease(
      Ref.update(channels, (all) => new Map(all).set(channel.interface, channel)),
      () => Ref.update(channels, (all) => {
        const next = new Map(all)
        if (next.get(channel.interface) === channel) next.delete(channel.interface)
        return next
      })
    )
  return Channels.of({
    register,
    get: (iface) => Effect.map(Ref.get(channels), (all) => Option.fromNullable(all.get(iface))),
    statuses: Effect.flatMap(Ref.get(channels), (all) => Effect.forEach([...all.values()], (channel) => channel.status)),
    outgoing
  })
})

export const layer: Layer.Layer<Channels> = Layer.effect(Channels, make)

/** A channel's connects and drops, one line each as its state changes (its retries are logged where they happen). */
const logTransition = (iface: string, old: ChannelStatus, now: ChannelStatus) => {
  const { detail, state } = now
  const why = detail === "" ? "" : `: ${detail}`
  const line = state === "connected"
    ? old.state === "connecting" ? `${iface}: connected` : `${iface}: connected again`
    : state === "reconnecting"
    ? `${iface}: connection dropped${why}`
    : state === "stopped"
    ? `${iface}: stopped${why}`
    : `${iface}: connecting`
  return Effect.logWithLevel(state === "connected" || state === "connecting" ? LogLevel.Info : LogLevel.Warning, line).pipe(
    Effect.annotateLogs({ channel: iface, state, was: old.state, wasForMs: now.sinceMs - old.sinceMs })
  )
}

/** A channel's status cell: set as it connects, fails and retries; read by `kern status`. */
export const makeStatusCell = (iface: string) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const cell = yield* Ref.make(new ChannelStatus({ interface: iface, state: "connecting", detail: "", sinceMs: now }))
    const set = (state: ChannelState, detail = "") =>
      Effect.flatMap(Clock.currentTimeMillis, (sinceMs) =>
        Ref.modify(cell, (old) => {
          if (old.state === state && old.detail === detail) return [Effect.void, old] as const
          const now = new ChannelStatus({ interface: iface, state, detail, sinceMs })
          return [old.state === state ? Effect.void : logTransition(iface, old, now), now] as const
        })).pipe(Effect.flatten)
    return { get: Ref.get(cell), set } as const
  })
