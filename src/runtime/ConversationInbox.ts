import { Deferred, Effect, Option, Ref, type Scope } from "effect"
import { MessageQueue, type NewMessage, type QueuedMessage } from "../turn/MessageQueue.js"
import { Conversations, type Delivery } from "./Conversations.js"
import type { Addressed } from "./conversationRouting.js"
import { type Cursor, Inbox, InboxError, type InboxEntry } from "./Inbox.js"

/**
 * The way into the conversation for an accepted message, kept exactly once: the inbox stores it (with its channel's
 * cursor), the conversations' door hands it over durably to its conversation (an Entity of the cluster), `receive`
 * queues it, and a turn records it; only then is it out of the inbox and done in the journal. `holds` says whether a
 * conversation's session (from its context cut on) holds an inbox id: that message was answered, and a redelivery of
 * it only leaves the inbox. What an earlier process accepted and never recorded is handed over again first, in order.
 */
export const makeConversationInbox = (routing: {
  /** The conversation a message belongs to (conversationRouting.ts). */
  readonly conversationOf: (message: Addressed) => Effect.Effect<string>
  /** Whether the conversation's session holds the message `inboxId` (a turn recorded it). */
  readonly holds: (conversation: string, inboxId: number) => Effect.Effect<boolean>
}) =>
  Effect.gen(function*() {
    const inbox = yield* Inbox
    const queue = yield* MessageQueue
    const conversations = yield* Conversations
    const scope: Scope.Scope = yield* Effect.scope

    /**
     * Who waits for a message: its sender until it is queued (none: it was already recorded), its conversation's
     * handler until it is recorded and out of the inbox.
     */
    const queuedWaits = yield* Ref.make<ReadonlyMap<number, Deferred.Deferred<Option.Option<QueuedMessage>>>>(new Map())
    const doneWaits = yield* Ref.make<ReadonlyMap<number, Deferred.Deferred<void>>>(new Map())
    const without = <V>(id: number) => (waits: ReadonlyMap<number, V>) => new Map([...waits].filter(([other]) => other !== id))
    const told = (id: number, queued: Option.Option<QueuedMessage>) =>
      Effect.flatMap(Ref.getAndUpdate(queuedWaits, without(id)), (waits) => {
        const waiting = waits.get(id)
        return waiting === undefined ? Effect.void : Deferred.succeed(waiting, queued)
      })
    const done = (id: number) =>
      Effect.flatMap(Ref.getAndUpdate(doneWaits, without(id)), (waits) => {
        const waiting = waits.get(id)
        return waiting === undefined ? Effect.void : Deferred.succeed(waiting, undefined)
      })

    /** Inbox rows whose message is in a session but whose removal failed (kern.db busy): removed again later. */
    const unremoved = yield* Ref.make<ReadonlySet<number>>(new Set())
    /**
     * A recorded message leaves the inbox, and only then is its handler done: while kern.db is busy nothing more is
     * written for it (the journal's reply would wait for the same lock), and a restart finds it in the session.
     */
    const removeRecorded = (id: number) =>
      inbox.remove(id).pipe(
        Effect.zipRight(Ref.update(unremoved, (ids) => new Set([...ids].filter((other) => other !== id)))),
        Effect.zipRight(done(id)),
        Effect.catchAll((error) =>
          Effect.zipRight(
            Ref.update(unremoved, (ids) => new Set([...ids, id])),
            Effect.logWarning(`kern: ${error.message}; message ${id} is in the session and leaves the inbox later`)
          )
        )
      )
    const retryRemovals = Effect.flatMap(Ref.get(unremoved), (ids) => Effect.forEach(ids, removeRecorded, { discard: true }))

    /**
     * What a conversation does with a message handed to it (durably, by the conversations' door), the one place that
     * keeps a message from being answered twice: one the session already holds (a redelivery after a crash: its turn
     * had recorded it) only leaves the inbox; one already in hand in this process is waited for; any other is queued.
     * Completes once the message is in the session and out of the inbox.
     */
    const receive = (delivery: Delivery): Effect.Effect<void> =>
      Effect.gen(function*() {
        const mine = yield* Deferred.make<void>()
        const already = yield* Ref.modify(doneWaits, (waits): readonly [Deferred.Deferred<void> | undefined, ReadonlyMap<number, Deferred.Deferred<void>>] => {
          const waiting = waits.get(delivery.id)
          return waiting === undefined ? [undefined, new Map([...waits, [delivery.id, mine]])] : [waiting, waits]
        })
        if (already !== undefined) return yield* Deferred.await(already)
        const conversation = yield* routing.conversationOf(delivery)
        if (yield* routing.holds(conversation, delivery.id)) {
          yield* removeRecorded(delivery.id)
          yield* told(delivery.id, Option.none())
        } else {
          const queued = yield* queue.offer(
            {
              interface: delivery.interface,
              channel: delivery.channel,
              userId: delivery.userId,
              text: delivery.text,
              ...(delivery.attachments === undefined ? {} : { attachments: delivery.attachments }),
              conversation
            },
            { inboxId: delivery.id, receivedAtMs: delivery.receivedAtMs }
          )
          yield* told(delivery.id, Option.some(queued))
        }
        yield* Deferred.await(mine)
      }).pipe(Effect.withSpan("kern.runtime.receive"))

    /** Waits for the message `id` to be queued (or found recorded) by the conversation. */
    const awaitQueued = (id: number) =>
      Effect.flatMap(Deferred.make<Option.Option<QueuedMessage>>(), (queued) =>
        Effect.as(Ref.update(queuedWaits, (waits) => new Map([...waits, [id, queued]])), Deferred.await(queued)))

    // What an earlier process accepted and never recorded is answered first, in order. Its waits are set before the
    // door opens: the journal may deliver some of it at once (one message all the same, whoever hands it over), and a
    // message the session holds only leaves the inbox.
    const pending = yield* inbox.pending
    const replayed = yield* Effect.forEach(pending, (entry) => awaitQueued(entry.id))

    const door = yield* conversations.open(receive)

    /**
     * Hands an inbox row to its conversation. Should the door fail (kern.db busy), the message is received here
     * directly: it is in the inbox all the same.
     */
    const handOver = (entry: InboxEntry) =>
      Effect.flatMap(routing.conversationOf(entry), (conversation) => door.deliver(entry, conversation)).pipe(
        Effect.catchAll((error) =>
          Effect.zipRight(Effect.logWarning(`kern: ${error.message}; it is answered all the same`), Effect.forkIn(receive(entry), scope))
        )
      )

    yield* Effect.forEach(pending, handOver, { discard: true })
    yield* Effect.all(replayed, { discard: true })

    // Inbox order is queue order: storing a message and handing it over is one step.
    const accepting = yield* Effect.makeSemaphore(1)

    /** Stores a message in the inbox (with its channel's cursor) and hands it over; done once it is queued. */
    const submit = (message: NewMessage, cursor?: Cursor): Effect.Effect<QueuedMessage, InboxError> =>
      Effect.gen(function*() {
        const [entry, queued] = yield* accepting.withPermits(1)(Effect.gen(function*() {
          const entry = yield* inbox.add(message, cursor)
          const queued = yield* awaitQueued(entry.id)
          yield* handOver(entry)
          return [entry, queued] as const
        }))
        const taken = yield* queued
        // A new inbox id is in no session: the conversation queues it.
        if (Option.isNone(taken)) return yield* new InboxError({ message: `message ${entry.id} was taken as recorded` })
        yield* Effect.logDebug(`message received (${message.text.length} characters), queued`).pipe(
          Effect.annotateLogs({ turn: taken.value.turnId, channel: `${message.interface}:${message.channel}`, user: message.userId })
        )
        return taken.value
      })

    /** A message of a turn is in its session (which now `holds` it): it leaves the inbox (see removeRecorded). */
    const recorded = (message: QueuedMessage) => message.inboxId === undefined ? Effect.void : removeRecorded(message.inboxId)

    /** After each turn: the removals kern.db refused are tried again, and the journal forgets what is recorded. */
    const afterTurn = Effect.zipRight(retryRemovals, door.prune)

    return { submit, recorded, afterTurn } as const
  })
