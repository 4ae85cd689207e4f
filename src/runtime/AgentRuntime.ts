import { Clock, Effect, ExecutionStrategy, Exit, Layer, PubSub, Ref, Scope, SynchronizedRef } from "effect"
import { ContextWindow } from "../context/ContextWindow.js"
import { heartbeatText } from "./heartbeat.js"
import { HeartbeatSchedule } from "./HeartbeatSchedule.js"
import type { SessionError } from "../session/SessionStore.js"
import { SessionStore } from "../session/SessionStore.js"
import { openActiveSession } from "./activeSession.js"
import { layerDurable as durableConversations } from "./Conversations.js"
import { makeConversationInbox } from "./ConversationInbox.js"
import * as InboxSql from "./Inbox.js"
import { type Cursor, Inbox, type InboxError } from "./Inbox.js"
import { heartbeatInterface, MessageQueue, type NewMessage, type QueuedMessage } from "../turn/MessageQueue.js"
import { makeRunTurn } from "../turn/runTurn.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import type { ActiveSession } from "../turn/TurnRunner.js"
import type { TurnOutcome } from "../turn/turnTally.js"

export type { HeartbeatNotice } from "./HeartbeatSchedule.js"

export { heartbeatText }

interface OpenSession {
  readonly session: ActiveSession
  readonly scope: Scope.CloseableScope
}

/**
 * The long-running agent: messages reach the conversation through its durable door (Conversations: an Entity of the
 * cluster over kern.db), one turn at a time from the queue (`step`), every turn's events published to all channels
 * (TurnEvents: each names its turn and conversation, and a turn's first, `incoming`, says where it came from), the
 * memory committed after turns, and the heartbeat told of messages and heartbeat turns. What serves it (the turn loop,
 * the heartbeat's ticks) are feature layers over it (TurnLoop, HeartbeatLoop; see layers.ts). Each session is open in
 * a scope of its own inside the runtime's, so `/new` closes the old file and shutting down closes (and syncs) the
 * current one.
 */
export class AgentRuntime extends Effect.Service<AgentRuntime>()("kern/runtime/AgentRuntime", {
  dependencies: [InboxSql.layerSql, durableConversations],
  scoped: Effect.gen(function*() {
    const heartbeat = yield* HeartbeatSchedule
    const queue = yield* MessageQueue
    const runTurn = yield* makeRunTurn
    const store = yield* SessionStore
    const context = yield* ContextWindow
    const inbox = yield* Inbox
    const events = yield* PubSub.unbounded<TurnEvent>()
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

    const conversation = yield* makeConversationInbox(yield* (yield* SynchronizedRef.get(current)).session.history.messages)

    /**
     * Accepts a message from a channel: once this succeeds it is in kern.db's inbox (it survives a crash and is
     * answered after a restart) and queued. The queued message carries the turn id its events will have. A chat
     * channel passes its cursor, moved in the same transaction (Inbox.add).
     */
    const submit = (message: NewMessage, cursor?: Cursor): Effect.Effect<QueuedMessage, InboxError> =>
      Effect.zipLeft(conversation.submit(message, cursor), heartbeat.messageArrived)

    /** The runtime's bookkeeping after each turn: a heartbeat's outcome, the count of turns run, the inbox's and journal's. */
    const ended = (message: QueuedMessage, exit: Exit.Exit<TurnOutcome>) =>
      Effect.zipRight(
        message.interface === heartbeatInterface ? heartbeat.turnEnded(message.turnId, exit) : Effect.void,
        // A turn whose session could not be written did not happen; an interrupted one leaves the rest to a restart.
        Exit.isSuccess(exit)
          ? Effect.all([
            exit.value.failure?._tag === "SessionNotWritten" ? Effect.void : Ref.update(turns, (n) => n + 1),
            conversation.afterTurn
          ], { discard: true })
          : Effect.void
      )

    /** Runs the next queued message's turn, publishing its events. */
    const step: Effect.Effect<TurnOutcome> = runTurn({
      session: Effect.map(SynchronizedRef.get(current), (open) => open.session),
      emit: (_message, event) => PubSub.publish(events, event),
      recorded: conversation.recorded,
      ended
    })

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

    return { submit, step, newSession, status, currentSession, idle: queue.idle, events, heartbeats: heartbeat.notices, startedAtMs } as const
  })
}) {}

/** The runtime with the heartbeat schedule it tells (which HeartbeatLoop runs): the same schedule for both. */
export const layer = AgentRuntime.Default.pipe(Layer.provideMerge(HeartbeatSchedule.Default))
