import { FileSystem } from "@effect/platform"
import { Clock, Duration, Effect, ExecutionStrategy, Exit, PubSub, Ref, Scope, SynchronizedRef } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { knowledgeReport, needsCare } from "../memory/knowledge.js"
import { makeSkippedFiles } from "../storage/agentFiles.js"
import { ContextWindow } from "../context/ContextWindow.js"
import { today } from "../memory/notes.js"
import { agentZone } from "../session/envelope.js"
import { heartbeatPrompt, heartbeatText, withinActiveHours } from "./heartbeat.js"
import { HeartbeatLog } from "./HeartbeatLog.js"
import type { SessionError } from "../session/SessionStore.js"
import { SessionStore } from "../session/SessionStore.js"
import { openActiveSession } from "./activeSession.js"
import * as InboxSql from "./Inbox.js"
import { type Cursor, Inbox } from "./Inbox.js"
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

/** What a heartbeat tick did (sent a heartbeat turn, or skipped), and how a heartbeat turn ended. */
export interface HeartbeatNotice {
  readonly outcome: "sent" | "skipped" | "ran" | "failed"
  readonly reason: string
  readonly turnId?: string | undefined
}

export { heartbeatText }

interface OpenSession {
  readonly session: ActiveSession
  readonly scope: Scope.CloseableScope
}

/**
 * The long-running agent: one turn at a time from the queue, every turn's events published to all channels, the
 * memory committed after turns, and a heartbeat on the Clock. Each session is open in a scope of its own inside the runtime's, so `/new` closes the old
 * file and shutting down closes (and syncs) the current one.
 */
export class AgentRuntime extends Effect.Service<AgentRuntime>()("kern/runtime/AgentRuntime", {
  dependencies: [HeartbeatLog.Default, InboxSql.layerSql],
  scoped: Effect.gen(function*() {
    const { config, paths } = yield* AgentConfig
    const heartbeatLog = yield* HeartbeatLog
    const fs = yield* FileSystem.FileSystem
    const queue = yield* MessageQueue
    const runTurn = yield* makeRunTurn
    const store = yield* SessionStore
    const context = yield* ContextWindow
    const inbox = yield* Inbox
    const events = yield* PubSub.unbounded<RuntimeEvent>()
    const heartbeats = yield* PubSub.unbounded<HeartbeatNotice>()
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

    const zone = agentZone(config.timezone)
    /** When the heartbeat that is queued or running was sent: the next tick is skipped rather than piled up. */
    const heartbeatSentAt = yield* Ref.make<number | undefined>(undefined)
    /** A message arrived since the last heartbeat was sent (assumed at start: the last process may not have saved it). */
    const activity = yield* Ref.make(true)
    // A knowledge file the door refuses is reported once, not at every heartbeat.
    const skippedKnowledge = yield* makeSkippedFiles()

    // Inbox order is queue order: storing and queueing a message is one step.
    const accepting = yield* Effect.makeSemaphore(1)
    const enqueue = (message: NewMessage, cursor?: Cursor) =>
      accepting.withPermits(1)(Effect.flatMap(inbox.add(message, cursor), (entry) => queue.offer(message, { inboxId: entry.id, receivedAtMs: entry.receivedAtMs })))

    /** Inbox rows whose message is in a session but whose removal failed (kern.db busy): removed again later. */
    const unremoved = yield* Ref.make<ReadonlySet<number>>(new Set())
    const removeRecorded = (id: number) =>
      inbox.remove(id).pipe(
        Effect.zipRight(Ref.update(unremoved, (ids) => new Set([...ids].filter((other) => other !== id)))),
        Effect.catchAll((error) =>
          Effect.zipRight(
            Ref.update(unremoved, (ids) => new Set([...ids, id])),
            Effect.logWarning(`kern: ${error.message}; message ${id} is in the session and leaves the inbox later`)
          )
        )
      )
    const retryRemovals = Effect.flatMap(Ref.get(unremoved), (ids) => Effect.forEach(ids, removeRecorded, { discard: true }))

    // What an earlier process accepted and never recorded is answered first, in order. A message the session already
    // holds (its removal from the inbox failed, or the process died between the two) was answered: it only leaves.
    const inSession = new Set<number>()
    for (const message of yield* (yield* SynchronizedRef.get(current)).session.history.messages) {
      if (message._tag === "user" && message.inboxId !== undefined) inSession.add(message.inboxId)
    }
    for (const entry of yield* inbox.pending) {
      if (inSession.has(entry.id)) {
        yield* removeRecorded(entry.id)
        continue
      }
      yield* queue.offer(
        { interface: entry.interface, channel: entry.channel, userId: entry.userId, text: entry.text },
        { inboxId: entry.id, receivedAtMs: entry.receivedAtMs }
      )
    }

    /**
     * Accepts a message from a channel: once this succeeds it is in kern.db's inbox (it survives a crash and is
     * answered after a restart) and queued. The queued message carries the turn id its events will have. A chat
     * channel passes its cursor, moved in the same transaction (Inbox.add).
     */
    const submit = (message: NewMessage, cursor?: Cursor) =>
      Effect.zipLeft(enqueue(message, cursor), Ref.set(activity, true)).pipe(
        Effect.tap((queued) =>
          Effect.logDebug(`message received (${message.text.length} characters), queued`).pipe(
            Effect.annotateLogs({ turn: queued.turnId, channel: `${message.interface}:${message.channel}`, user: message.userId })
          )
        )
      )

    /**
     * A recorded message leaves the inbox. If that fails (kern.db busy) it is tried again after each turn, and a
     * restart finds its id in the session line: it is never answered twice, nor lost.
     */
    const recorded = (message: QueuedMessage) => message.inboxId === undefined ? Effect.void : removeRecorded(message.inboxId)

    /** Bookkeeping when a heartbeat's turn ends: free for the next one, and what it did. */
    const heartbeatDone = (turnId: string, outcome: Exit.Exit<TurnOutcome>) =>
      Effect.gen(function*() {
        const now = (yield* Ref.getAndSet(heartbeatSentAt, undefined)) ?? (yield* Clock.currentTimeMillis)
        if (Exit.isSuccess(outcome) && outcome.value.failure === undefined) {
          const reason = outcome.value.delivered ? "the agent sent a message" : "nothing to report"
          yield* heartbeatLog.record(now, "ran", reason)
          yield* PubSub.publish(heartbeats, { outcome: "ran", reason, turnId })
        } else {
          const reason = Exit.isSuccess(outcome) ? outcome.value.failure?.message ?? "" : "the turn failed"
          yield* heartbeatLog.record(now, "failed", reason)
          yield* PubSub.publish(heartbeats, { outcome: "failed", reason, turnId })
        }
      })

    /** The runtime's bookkeeping after each turn: a heartbeat's outcome, the count of turns run, late inbox removals. */
    const ended = (message: QueuedMessage, exit: Exit.Exit<TurnOutcome>) =>
      Effect.zipRight(
        message.interface === heartbeatInterface ? heartbeatDone(message.turnId, exit) : Effect.void,
        // A turn whose session could not be written did not happen; an interrupted one leaves the rest to a restart.
        Exit.isSuccess(exit)
          ? Effect.zipRight(exit.value.failure?._tag === "SessionNotWritten" ? Effect.void : Ref.update(turns, (n) => n + 1), retryRemovals)
          : Effect.void
      )

    /** Runs the next queued message's turn, publishing its events. */
    const step: Effect.Effect<TurnOutcome> = runTurn({
      session: Effect.map(SynchronizedRef.get(current), (open) => open.session),
      emit: (message, event) => PubSub.publish(events, { message, event }),
      recorded,
      ended
    })

    /**
     * One heartbeat tick: skipped outside activeHours, while the last heartbeat is queued or running (they never pile
     * up), and when nothing happened since the last one (no message, knowledge in order): no model call then.
     * Otherwise the `[heartbeat]` message goes in the queue, naming the knowledge that needs care.
     */
    const skipped = (nowMs: number, reason: string) =>
      Effect.all([
        Effect.logDebug(`heartbeat skipped: ${reason}`),
        heartbeatLog.record(nowMs, "skipped", reason),
        PubSub.publish(heartbeats, { outcome: "skipped", reason })
      ], { discard: true })

    const tick = (nowMs: number) =>
      Effect.gen(function*() {
        if (!withinActiveHours(config.activeHours, nowMs, zone)) {
          return yield* skipped(nowMs, `outside activeHours (${config.activeHours})`)
        }
        if ((yield* Ref.get(heartbeatSentAt)) !== undefined) {
          return yield* skipped(nowMs, "the previous heartbeat is still queued or running")
        }
        const knowledge = yield* knowledgeReport(paths.dir, config.staleKnowledgeDays, skippedKnowledge).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.catchAll((error) =>
            Effect.as(Effect.logWarning(`kern: could not check knowledge/: ${error.message}`), { stale: [], unindexed: [] })
          )
        )
        if (!(yield* Ref.get(activity)) && !needsCare(knowledge)) {
          return yield* skipped(nowMs, "nothing happened since the last heartbeat")
        }
        yield* Ref.set(heartbeatSentAt, nowMs)
        yield* Ref.set(activity, false)
        // A heartbeat is not durable: a restart makes a new one when it is due.
        const queued = yield* queue.offer({
          interface: heartbeatInterface,
          channel: "heartbeat",
          userId: "system",
          text: heartbeatPrompt(yield* today(zone), knowledge)
        })
        yield* Effect.logInfo("heartbeat: a heartbeat turn is queued").pipe(Effect.annotateLogs({ turn: queued.turnId }))
        yield* PubSub.publish(heartbeats, { outcome: "sent", reason: "a heartbeat turn is queued", turnId: queued.turnId })
      }).pipe(Effect.withSpan("kern.heartbeat.tick"))

    const intervalMs = config.heartbeatInterval * 60_000

    /**
     * The heartbeat: a tick every heartbeatInterval minutes, the next one due an interval after the last one fired,
     * so a tick that comes late (a suspended machine) fires once, not once per interval missed.
     */
    const heartbeat = intervalMs === 0 ? Effect.never : Effect.gen(function*() {
      let next = (yield* Clock.currentTimeMillis) + intervalMs
      yield* heartbeatLog.setNext(next)
      while (true) {
        const now = yield* Clock.currentTimeMillis
        if (now < next) {
          yield* Effect.sleep(Duration.millis(next - now))
          continue
        }
        yield* tick(now)
        next = now + intervalMs
        yield* heartbeatLog.setNext(next)
      }
    }).pipe(Effect.ensuring(heartbeatLog.setNext(null)))

    /** Serves the queue until interrupted. */
    const serve = Effect.zipRight(
      Effect.forkScoped(heartbeat),
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

    return { submit, step, serve, newSession, status, currentSession, idle: queue.idle, events, heartbeats, startedAtMs } as const
  })
}) {}
