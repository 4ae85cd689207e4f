import { Clock, Deferred, Effect, ExecutionStrategy, Exit, HashSet, Option, PubSub, Ref, Scope, SynchronizedRef } from "effect"
import { ContextWindow } from "../context/ContextWindow.js"
import { heartbeatText } from "./heartbeat.js"
import { HeartbeatSchedule } from "./HeartbeatSchedule.js"
import type { SessionError } from "../session/SessionStore.js"
import { SessionStore } from "../session/SessionStore.js"
import { openActiveSession } from "./activeSession.js"
import { Conversations, type Delivery, layerDurable as durableConversations } from "./Conversations.js"
import * as InboxSql from "./Inbox.js"
import { type Cursor, Inbox, InboxError, type InboxEntry } from "./Inbox.js"
import { heartbeatInterface, MessageQueue, type NewMessage, type QueuedMessage } from "../turn/MessageQueue.js"
import { makeRunTurn } from "../turn/runTurn.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import type { ActiveSession } from "../turn/TurnRunner.js"
import type { TurnOutcome } from "../turn/turnTally.js"

/** A turn's event, tagged with the message that started the turn (so a channel can pick out its own replies). */
export interface RuntimeEvent {
  readonly message: QueuedMessage
  readonly event: TurnEvent
}

export type { HeartbeatNotice } from "./HeartbeatSchedule.js"

export { heartbeatText }

interface OpenSession {
  readonly session: ActiveSession
  readonly scope: Scope.CloseableScope
}

/**
 * The long-running agent: messages reach the conversation through its durable door (Conversations: an Entity of the
 * cluster over kern.db), one turn at a time from the queue, every turn's events published to all channels, the memory
 * committed after turns, and a heartbeat on the Clock. Each session is open in a scope of its own inside the
 * runtime's, so `/new` closes the old file and shutting down closes (and syncs) the current one.
 */
export class AgentRuntime extends Effect.Service<AgentRuntime>()("kern/runtime/AgentRuntime", {
  dependencies: [HeartbeatSchedule.Default, InboxSql.layerSql, durableConversations],
  scoped: Effect.gen(function*() {
    const heartbeat = yield* HeartbeatSchedule
    const queue = yield* MessageQueue
    const runTurn = yield* makeRunTurn
    const store = yield* SessionStore
    const context = yield* ContextWindow
    const inbox = yield* Inbox
    const conversations = yield* Conversations
    const events = yield* PubSub.unbounded<RuntimeEvent>()
    const startedAtMs = yield* Clock.currentTimeMillis
    const turns = yield* Ref.make(0)
    const runtimeScope = yield* Effect.scope

    const openIn = (fresh: boolean): Effect.Effect<OpenSession, SessionError> =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(runtimeScope, ExecutionStrategy.sequential)
        const { problems, session } = yield* openActiveSession({ fresh }).pipe(
          Effect.provideService(SessionStore, store),
          Effect.provideService(ContextWindow, context),
          Scope.extend(scope),
          Effect.tapError(() => Scope.close(scope, Exit.void))
        )
        for (const problem of problems) yield* Effect.logWarning(`kern: ${problem}`)
        return { session, scope }
      })

    const current = yield* SynchronizedRef.make(yield* openIn(false))

    /** Starts a new session; the next turn writes there. */
    const newSession = SynchronizedRef.updateAndGetEffect(current, (old) =>
      Effect.zipLeft(openIn(true), Scope.close(old.scope, Exit.void))).pipe(Effect.map((open) => open.session.id))

    /** The inbox ids the session holds (from its context cut on, and every message recorded since). */
    const inSession = yield* Ref.make(HashSet.fromIterable(
      (yield* (yield* SynchronizedRef.get(current)).session.history.messages).flatMap((message) =>
        message._tag === "user" && message.inboxId !== undefined ? [message.inboxId] : []
      )
    ))
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
        if (HashSet.has(yield* Ref.get(inSession), delivery.id)) {
          yield* removeRecorded(delivery.id)
          yield* told(delivery.id, Option.none())
        } else {
          const queued = yield* queue.offer(
            { interface: delivery.interface, channel: delivery.channel, userId: delivery.userId, text: delivery.text },
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
      door.deliver(entry).pipe(
        Effect.catchAll((error) =>
          Effect.zipRight(Effect.logWarning(`kern: ${error.message}; it is answered all the same`), Effect.forkIn(receive(entry), runtimeScope))
        )
      )

    yield* Effect.forEach(pending, handOver, { discard: true })
    yield* Effect.all(replayed, { discard: true })

    // Inbox order is queue order: storing a message and handing it over is one step.
    const accepting = yield* Effect.makeSemaphore(1)

    /**
     * Accepts a message from a channel: once this succeeds it is in kern.db's inbox (it survives a crash and is
     * answered after a restart) and queued. The queued message carries the turn id its events will have. A chat
     * channel passes its cursor, moved in the same transaction (Inbox.add).
     */
    const submit = (message: NewMessage, cursor?: Cursor): Effect.Effect<QueuedMessage, InboxError> =>
      Effect.gen(function*() {
        const [entry, queued] = yield* accepting.withPermits(1)(Effect.gen(function*() {
          const entry = yield* inbox.add(message, cursor)
          const queued = yield* awaitQueued(entry.id)
          yield* handOver(entry)
          return [entry, queued] as const
        }))
        yield* heartbeat.messageArrived
        const taken = yield* queued
        // A new inbox id is in no session: the conversation queues it.
        if (Option.isNone(taken)) return yield* new InboxError({ message: `message ${entry.id} was taken as recorded` })
        yield* Effect.logDebug(`message received (${message.text.length} characters), queued`).pipe(
          Effect.annotateLogs({ turn: taken.value.turnId, channel: `${message.interface}:${message.channel}`, user: message.userId })
        )
        return taken.value
      })

    /** A message of a turn is in the session: it leaves the inbox (see removeRecorded). */
    const recorded = (message: QueuedMessage) => {
      const id = message.inboxId
      return id === undefined ? Effect.void : Effect.zipRight(Ref.update(inSession, HashSet.add(id)), removeRecorded(id))
    }

    /** The runtime's bookkeeping after each turn: a heartbeat's outcome, the count of turns run, late inbox removals. */
    const ended = (message: QueuedMessage, exit: Exit.Exit<TurnOutcome>) =>
      Effect.zipRight(
        message.interface === heartbeatInterface ? heartbeat.turnEnded(message.turnId, exit) : Effect.void,
        // A turn whose session could not be written did not happen; an interrupted one leaves the rest to a restart.
        Exit.isSuccess(exit)
          ? Effect.all([
            exit.value.failure?._tag === "SessionNotWritten" ? Effect.void : Ref.update(turns, (n) => n + 1),
            retryRemovals,
            door.prune
          ], { discard: true })
          : Effect.void
      )

    /** Runs the next queued message's turn, publishing its events. */
    const step: Effect.Effect<TurnOutcome> = runTurn({
      session: Effect.map(SynchronizedRef.get(current), (open) => open.session),
      emit: (message, event) => PubSub.publish(events, { message, event }),
      recorded,
      ended
    })

    /** Serves the queue until interrupted. */
    const serve = Effect.zipRight(
      Effect.forkScoped(heartbeat.run),
      Effect.forever(step)
    ).pipe(Effect.scoped)

    const status = Effect.gen(function*() {
      const { session } = yield* SynchronizedRef.get(current)
      return {
        sessionId: session.id,
        messages: yield* session.history.size,
        queued: yield* queue.size,
        inbox: yield* inbox.size.pipe(Effect.orElseSucceed(() => -1)),
        turns: yield* Ref.get(turns),
        uptimeMs: (yield* Clock.currentTimeMillis) - startedAtMs
      }
    })

    const currentSession = Effect.map(SynchronizedRef.get(current), (open) => open.session)

    return { submit, step, serve, newSession, status, currentSession, idle: queue.idle, events, heartbeats: heartbeat.notices, startedAtMs } as const
  })
}) {}
