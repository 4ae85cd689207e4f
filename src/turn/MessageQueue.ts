import { Clock, Effect, Option, Schema, STM, TRef } from "effect"
import { mainConversation } from "../kernel/Audience.js"
import { Attachment } from "../session/messages.js"

/** A message waiting for the agent, from any channel. */
/** A message waiting for (or taken by) a turn. */
export const QueuedMessage = Schema.Struct({
  id: Schema.Number,
  interface: Schema.String,
  /** The conversation it belongs to (a chat id, "terminal", "web:<session>"). */
  channel: Schema.String,
  userId: Schema.String,
  text: Schema.String,
  /** Files that came with it, stored in the media store (src/media/MediaStore.ts). */
  attachments: Schema.optional(Schema.Array(Attachment)),
  receivedAtMs: Schema.Number,
  /** What clients follow the turn by: the inbox id for a durable message, else one made by the queue. */
  turnId: Schema.String,
  /** The message's row in the durable inbox, removed once the turn has recorded it. */
  inboxId: Schema.optional(Schema.Number),
  /** The conversation whose session it goes to (Audience.ts): `main`, the operator's, unless the runtime routed it elsewhere. */
  conversation: Schema.String
})
export type QueuedMessage = typeof QueuedMessage.Type

export type NewMessage = Omit<QueuedMessage, "id" | "receivedAtMs" | "turnId" | "inboxId" | "conversation"> & {
  readonly conversation?: string | undefined
}

/** A message already stored in the inbox: its id there and when it arrived. */
export interface Durable {
  readonly inboxId: number
  readonly receivedAtMs: number
}

export { operatorUserId } from "../kernel/Audience.js"

/** Heartbeats are never the active channel: nothing is injected into a heartbeat turn. */
export const heartbeatInterface = "heartbeat"

/** A running turn's channel and user (none for a heartbeat's): only their own newer messages join it. */
type Running = Option.Option<{ readonly channel: string; readonly userId: string }>

interface State {
  readonly pending: ReadonlyArray<QueuedMessage>
  /** The conversations with a turn running (between `next` and `endTurn`), each with its turn's channel and user. */
  readonly running: ReadonlyMap<string, Running>
  readonly nextId: number
}

/**
 * `pending` with `queued` placed last, except before the durable messages stored in the inbox after it: messages
 * handed over concurrently (the conversation's handlers run side by side) still line up in the order the inbox took
 * them.
 */
const inInboxOrder = (pending: ReadonlyArray<QueuedMessage>, queued: QueuedMessage): ReadonlyArray<QueuedMessage> => {
  const inboxId = queued.inboxId
  const later = inboxId === undefined ? -1 : pending.findIndex((m) => m.inboxId !== undefined && m.inboxId > inboxId)
  return later === -1 ? [...pending, queued] : [...pending.slice(0, later), queued, ...pending.slice(later)]
}

/**
 * One FIFO per agent, turns serialized per conversation: `next` hands out the oldest message whose conversation has no
 * turn running and marks it running, so turns of different conversations may run side by side (as many as callers
 * take messages) while one conversation's messages are answered one after another, in order. During a turn,
 * `takeInjectable` removes its channel's newer messages (to inject at the next step); everything else keeps its place.
 */
export class MessageQueue extends Effect.Service<MessageQueue>()("kern/turn/MessageQueue", {
  effect: Effect.gen(function*() {
    const state = yield* TRef.make<State>({ pending: [], running: new Map(), nextId: 1 })
    // Turn ids of messages that are not in the inbox must not repeat those of an earlier process.
    const epoch = yield* Clock.currentTimeMillis

    const offer = (message: NewMessage, durable?: Durable) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        STM.commit(TRef.modify(state, (s): readonly [QueuedMessage, State] => {
          const conversation = message.conversation ?? mainConversation
          const queued: QueuedMessage = durable === undefined
            ? { ...message, conversation, id: s.nextId, receivedAtMs: now, turnId: `q${epoch}-${s.nextId}` }
            : {
              ...message,
              conversation,
              id: s.nextId,
              receivedAtMs: durable.receivedAtMs,
              turnId: String(durable.inboxId),
              inboxId: durable.inboxId
            }
          return [queued, { ...s, pending: inInboxOrder(s.pending, queued), nextId: s.nextId + 1 }]
        })))

    /** Waits for the oldest message of a conversation with no turn running, and starts its turn. */
    const next = STM.commit(
      TRef.get(state).pipe(
        STM.flatMap((s) => {
          const first = s.pending.find((m) => !s.running.has(m.conversation))
          if (first === undefined) return STM.retry
          const running: Running = first.interface === heartbeatInterface
            ? Option.none()
            : Option.some({ channel: first.channel, userId: first.userId })
          return STM.as(
            TRef.set(state, { ...s, pending: s.pending.filter((m) => m !== first), running: new Map([...s.running, [first.conversation, running]]) }),
            first
          )
        })
      )
    )

    /**
     * The pending messages of the running turn of `conversation` from its channel and user, in order, removed from
     * the queue. Another user's message in the same chat (a group) waits for a turn of its own: it never runs with
     * this user's scope.
     */
    const takeInjectable = (conversation: string) =>
      STM.commit(
        TRef.modify(state, (s): readonly [ReadonlyArray<QueuedMessage>, State] => {
          const active = s.running.get(conversation)
          if (active === undefined || Option.isNone(active)) return [[], s]
          const { channel, userId } = active.value
          const inject = s.pending.filter((m) =>
            m.conversation === conversation && m.channel === channel && m.userId === userId && m.interface !== heartbeatInterface
          )
          if (inject.length === 0) return [[], s]
          return [inject, { ...s, pending: s.pending.filter((m) => !inject.includes(m)) }]
        })
      )

    /** The turn of `conversation` is over: its next message may be taken. */
    const endTurn = (conversation: string) =>
      STM.commit(TRef.update(state, (s) => ({ ...s, running: new Map([...s.running].filter(([other]) => other !== conversation)) })))

    /** Nothing waiting and no turn running. */
    const idle = STM.commit(STM.map(TRef.get(state), (s) => s.pending.length === 0 && s.running.size === 0))

    const size = STM.commit(STM.map(TRef.get(state), (s) => s.pending.length))
    /** The channel of the running turn of `conversation`, if one runs (none for a heartbeat's). */
    const activeChannelOf = (conversation: string) =>
      STM.commit(STM.map(TRef.get(state), (s) => Option.map(Option.flatten(Option.fromNullable(s.running.get(conversation))), (active) => active.channel)))

    return { offer, next, takeInjectable, endTurn, size, activeChannelOf, idle } as const
  })
}) {}
