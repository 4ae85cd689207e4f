import { Clock, Effect, ExecutionStrategy, Exit, HashSet, Layer, PubSub, Ref, Scope, SynchronizedRef } from "effect"
import { SqlClient } from "@effect/sql"
import { mainConversation } from "../kernel/Audience.js"
import { linkMedia } from "../media/mediaLinks.js"
import type { SessionMessage } from "../session/messages.js"
import { ContextWindow } from "../context/ContextWindow.js"
import { heartbeatText } from "./heartbeat.js"
import { HeartbeatSchedule } from "./HeartbeatSchedule.js"
import type { SessionError } from "../session/SessionStore.js"
import { SessionStore } from "../session/SessionStore.js"
import { openActiveSession } from "./activeSession.js"
import { type Conversations, layerDurable as durableConversations } from "./Conversations.js"
import { makeConversationInbox } from "./ConversationInbox.js"
import { makeConversationOf } from "./conversationRouting.js"
import { noteSharedHistory } from "./sharedHistoryNotice.js"
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

/** The inbox ids of the messages a session holds (from its context cut on): those were answered. */
const inboxIdsOf = (messages: ReadonlyArray<SessionMessage>) =>
  messages.flatMap((message) => message._tag === "user" && message.inboxId !== undefined ? [message.inboxId] : [])

/**
 * The long-running agent: messages reach their conversation (conversationRouting.ts: the operator's `main`, or a
 * person's, a group's, a thread's) through its durable door (Conversations: an Entity of the cluster over kern.db),
 * each conversation's turns one at a time from the queue (`step`; turns of different conversations may run side by
 * side, as many as there are callers of `step`), every turn's events published to all channels
 * (TurnEvents: each names its turn and conversation, and a turn's first, `incoming`, says where it came from), the
 * memory committed after turns, and the heartbeat told of messages and heartbeat turns. What serves it (the turn loop,
 * the heartbeat's ticks) are feature layers over it (TurnLoop, ScheduleLoop; see layers.ts). Each session is open in
 * a scope of its own inside the runtime's, opened when its conversation first needs it, so `/new` closes the old file
 * and shutting down closes (and syncs) every open one.
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
    const sql = yield* SqlClient.SqlClient
    const events = yield* PubSub.unbounded<TurnEvent>()
    const startedAtMs = yield* Clock.currentTimeMillis
    const turns = yield* Ref.make(0)
    const runtimeScope = yield* Effect.scope

    /** The inbox ids every open session holds, and every message recorded since: those were answered. */
    const answered = yield* Ref.make(HashSet.empty<number>())

    const openIn = (conversation: string, fresh: boolean): Effect.Effect<OpenSession, SessionError> =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(runtimeScope, ExecutionStrategy.sequential)
        const { problems, session } = yield* openActiveSession({ fresh, conversation }).pipe(
          Effect.provideService(SessionStore, store),
          Effect.provideService(ContextWindow, context),
          Scope.extend(scope),
          Effect.tapError(() => Scope.close(scope, Exit.void))
        )
        for (const problem of problems) yield* Effect.logWarning(`kern: ${problem}`)
        yield* Ref.update(answered, HashSet.union(inboxIdsOf(yield* session.history.messages)))
        return { session, scope }
      })

    /** Each conversation's open session; the operator's is opened at once, any other when it first has a message. */
    const open = yield* SynchronizedRef.make<ReadonlyMap<string, OpenSession>>(
      new Map([[mainConversation, yield* openIn(mainConversation, false)]])
    )

    /** The open session of `conversation`, opened now if it is not. */
    const sessionOf = (conversation: string): Effect.Effect<ActiveSession, SessionError> =>
      SynchronizedRef.modifyEffect(open, (sessions) => {
        const known = sessions.get(conversation)
        return known !== undefined
          ? Effect.succeed([known.session, sessions] as const)
          : Effect.map(openIn(conversation, false), (opened) => [opened.session, new Map([...sessions, [conversation, opened]])] as const)
      })

    /** Starts a new session of `conversation` (the operator's unless named); its next turn writes there. */
    const newSession = (conversation: string = mainConversation) =>
      SynchronizedRef.modifyEffect(open, (sessions) =>
        Effect.gen(function*() {
          const fresh = yield* openIn(conversation, true)
          const old = sessions.get(conversation)
          if (old !== undefined) yield* Scope.close(old.scope, Exit.void)
          return [fresh.session.id, new Map([...sessions, [conversation, fresh]])] as const
        }))

    const conversationOf = yield* makeConversationOf
    const conversation = yield* makeConversationInbox({
      conversationOf,
      // A conversation whose session cannot be opened holds nothing: its message is queued, and its turn says why.
      holds: (id, inboxId) => Effect.zipRight(Effect.either(sessionOf(id)), Effect.map(Ref.get(answered), HashSet.has(inboxId)))
    })

    /**
     * Accepts a message from a channel: once this succeeds it is in kern.db's inbox (it survives a crash and is
     * answered after a restart) and queued. The queued message carries the turn id its events will have. A chat
     * channel passes its cursor, moved in the same transaction (Inbox.add).
     */
    const submit = (message: NewMessage, cursor?: Cursor): Effect.Effect<QueuedMessage, InboxError> =>
      // The heartbeat is told first: a message in the inbox is never one its durable flag missed (a crash in between).
      Effect.zipRight(heartbeat.messageArrived, conversation.submit(message, cursor)).pipe(
        // Its files belong to its conversation from now on: what that conversation's web view and tools may reach.
        Effect.tap((queued) =>
          queued.attachments === undefined || queued.attachments.length === 0
            ? Effect.void
            : linkMedia(queued.attachments.map((file) => file.id), queued.conversation).pipe(
              Effect.provideService(SqlClient.SqlClient, sql),
              Effect.catchAll((error) => Effect.logWarning(`kern: could not link the files of a message to its conversation: ${error.message}`))
            )
        )
      )

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

    /** Runs the next queued message's turn (of a conversation with none running), publishing its events. */
    const step: Effect.Effect<TurnOutcome> = runTurn({
      session: (message) => sessionOf(message.conversation),
      emit: (_message, event) => PubSub.publish(events, event),
      recorded: (message) =>
        Effect.zipRight(
          message.inboxId === undefined ? Effect.void : Ref.update(answered, HashSet.add(message.inboxId)),
          conversation.recorded(message)
        ),
      ended
    })

    const currentSession = Effect.map(SynchronizedRef.get(open), (sessions) => sessions.get(mainConversation)!.session)

    // What an agent from before conversations per person keeps in the operator's conversation, said once, meanwhile.
    yield* Effect.forkScoped(noteSharedHistory(conversationOf))

    const status = Effect.gen(function*() {
      const session = yield* currentSession
      return {
        sessionId: session.id,
        messages: yield* session.history.size,
        queued: yield* queue.size,
        inbox: yield* inbox.size.pipe(Effect.orElseSucceed(() => -1)),
        turns: yield* Ref.get(turns),
        uptimeMs: (yield* Clock.currentTimeMillis) - startedAtMs
      }
    })

    return { submit, step, newSession, status, currentSession, idle: queue.idle, events, heartbeats: heartbeat.notices, startedAtMs } as const
  })
}) {}

/** The runtime with the heartbeat schedule it tells (which the Scheduler fires, ScheduleLoop): the same schedule for both. */
export const layer = AgentRuntime.Default.pipe(Layer.provideMerge(HeartbeatSchedule.Default))

/**
 * The same over conversations given (a hosted agent among several runners: the shared cluster's door,
 * src/runtime/cluster/AgentEntity.ts) instead of its own cluster over kern.db.
 */
export const layerWith = (conversations: Layer.Layer<Conversations>) =>
  AgentRuntime.DefaultWithoutDependencies.pipe(
    Layer.provide(Layer.merge(InboxSql.layerSql, conversations)),
    Layer.provideMerge(HeartbeatSchedule.Default)
  )
