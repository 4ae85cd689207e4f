import { Clock, Effect, Option, Schema, STM, TRef } from "effect"
import { mainConversation } from "../kernel/Audience.js"

/** A message waiting for the agent, from any channel. */
/** A message waiting for (or taken by) a turn. */
export const QueuedMessage = Schema.Struct({
  id: Schema.Number,
  interface: Schema.String,
  /** The conversation it belongs to (a chat id, "terminal", "web:<session>"). */
  channel: Schema.String,
  userId: Schema.String,
  text: Schema.String,
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

/**
 * The user id of the operator's own messages (terminal, web UI, CLI, HTTP API: whoever holds the folder or its
 * token). Chat channels put their peer's ids (numeric for Telegram, `U…` for Slack) in `userId`, never this.
 */
export const operatorUserId = "operator"

/** Heartbeats are never the active channel: nothing is injected into a heartbeat turn. */
export const heartbeatInterface = "heartbeat"

interface State {
  readonly pending: ReadonlyArray<QueuedMessage>
  /** The running turn's channel and user: only their own newer messages join it. */
  readonly active: Option.Option<{ readonly channel: string; readonly userId: string }>
  /** A turn is running (between `next` and `endTurn`), whatever its channel. */
  readonly inTurn: boolean
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
 * One FIFO per agent. Turns are strictly serialized: `next` hands out one message at a time and makes its channel
 * the active one; during the turn, `takeInjectable` removes the active channel's newer messages (to inject at the
 * next step) while other channels keep their place in line.
 */
export class MessageQueue extends Effect.Service<MessageQueue>()("kern/turn/MessageQueue", {
  effect: Effect.gen(function*() {
    const state = yield* TRef.make<State>({ pending: [], active: Option.none(), inTurn: false, nextId: 1 })
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

    /** Waits for the oldest message and starts its turn. */
    const next = STM.commit(
      TRef.get(state).pipe(
        STM.flatMap((s) => {
          const [first, ...rest] = s.pending
          if (first === undefined) return STM.retry
          const active = first.interface === heartbeatInterface
            ? Option.none()
            : Option.some({ channel: first.channel, userId: first.userId })
          return STM.as(TRef.set(state, { ...s, pending: rest, active, inTurn: true }), first)
        })
      )
    )

    /**
     * The active channel's pending messages from the turn's own user, in order, removed from the queue. Another
     * user's message in the same chat (a group) waits for a turn of its own: it never runs with this user's scope.
     */
    const takeInjectable = STM.commit(
      TRef.modify(state, (s): readonly [ReadonlyArray<QueuedMessage>, State] => {
        if (Option.isNone(s.active)) return [[], s]
        const { channel, userId } = s.active.value
        const inject = s.pending.filter((m) => m.channel === channel && m.userId === userId && m.interface !== heartbeatInterface)
        if (inject.length === 0) return [[], s]
        return [inject, { ...s, pending: s.pending.filter((m) => !inject.includes(m)) }]
      })
    )

    const endTurn = STM.commit(TRef.update(state, (s) => ({ ...s, active: Option.none(), inTurn: false })))

    /** Nothing waiting and no turn running. */
    const idle = STM.commit(STM.map(TRef.get(state), (s) => s.pending.length === 0 && !s.inTurn))

    const size = STM.commit(STM.map(TRef.get(state), (s) => s.pending.length))
    const activeChannel = STM.commit(STM.map(TRef.get(state), (s) => Option.map(s.active, (active) => active.channel)))

    return { offer, next, takeInjectable, endTurn, size, activeChannel, idle } as const
  })
}) {}
