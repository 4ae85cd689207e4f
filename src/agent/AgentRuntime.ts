import { Clock, Effect, ExecutionStrategy, Exit, PubSub, Ref, Schedule, Scope, SynchronizedRef } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { MemoryCommits } from "../memory/MemoryCommits.js"
import type { SessionError } from "../session/SessionStore.js"
import { SessionStore } from "../session/SessionStore.js"
import { openActiveSession } from "./activeSession.js"
import { heartbeatInterface, MessageQueue, type NewMessage, type QueuedMessage } from "./MessageQueue.js"
import type { TurnEvent } from "./TurnEvent.js"
import { type ActiveSession, type TurnOutcome, TurnRunner } from "./TurnRunner.js"

/** A turn's event, tagged with the message that started the turn (so a channel can pick out its own replies). */
export interface RuntimeEvent {
  readonly message: QueuedMessage
  readonly event: TurnEvent
}

export const heartbeatText = "[heartbeat]"

interface OpenSession {
  readonly session: ActiveSession
  readonly scope: Scope.CloseableScope
}

/**
 * The long-running agent: one turn at a time from the queue, every turn's events published to all channels, and a
 * heartbeat on the Clock. Each session is open in a scope of its own inside the runtime's, so `/new` closes the old
 * file and shutting down closes (and syncs) the current one.
 */
export class AgentRuntime extends Effect.Service<AgentRuntime>()("kern/agent/AgentRuntime", {
  scoped: Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const store = yield* SessionStore
    const memory = yield* MemoryCommits
    const events = yield* PubSub.unbounded<RuntimeEvent>()
    const startedAtMs = yield* Clock.currentTimeMillis
    const turns = yield* Ref.make(0)
    const runtimeScope = yield* Effect.scope

    const openIn = (fresh: boolean): Effect.Effect<OpenSession, SessionError> =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(runtimeScope, ExecutionStrategy.sequential)
        const { problems, session } = yield* openActiveSession({ fresh }).pipe(
          Effect.provideService(SessionStore, store),
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

    const submit = (message: NewMessage) => queue.offer(message)

    /** Runs the next queued message's turn, publishing its events. */
    const step: Effect.Effect<TurnOutcome> = Effect.gen(function*() {
      const message = yield* queue.next
      const { session } = yield* SynchronizedRef.get(current)
      const outcome = yield* runner.run({
        message,
        session,
        emit: (event) => PubSub.publish(events, { message, event })
      }).pipe(Effect.ensuring(queue.endTurn))
      yield* Ref.update(turns, (n) => n + 1)
      yield* memory.afterTurn
      return outcome
    }).pipe(
      Effect.catchAll((error) =>
        Effect.as(Effect.logError(`kern: a turn failed: ${error.message}`), {
          reply: "",
          delivered: false,
          steps: 0,
          modelMs: 0,
          usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsdCents: 0 },
          error: error.message
        })
      )
    )

    /** The heartbeat: a `[heartbeat]` message every heartbeatInterval minutes (none while one is waiting). */
    const heartbeat = config.heartbeatInterval === 0
      ? Effect.never
      : Effect.repeat(
        submit({ interface: heartbeatInterface, channel: "heartbeat", userId: "system", text: heartbeatText }),
        Schedule.spaced(`${config.heartbeatInterval} minutes`)
      ).pipe(Effect.delay(`${config.heartbeatInterval} minutes`))

    /** Serves the queue until interrupted. */
    const serve = Effect.zipRight(
      Effect.forkScoped(heartbeat),
      Effect.forever(step)
    ).pipe(Effect.scoped)

    const status = Effect.gen(function*() {
      const { session } = yield* SynchronizedRef.get(current)
      return {
        sessionId: session.id,
        messages: (yield* Ref.get(session.messages)).length,
        queued: yield* queue.size,
        turns: yield* Ref.get(turns),
        uptimeMs: (yield* Clock.currentTimeMillis) - startedAtMs
      }
    })

    const currentSession = Effect.map(SynchronizedRef.get(current), (open) => open.session)

    return { submit, step, serve, newSession, status, currentSession, idle: queue.idle, events } as const
  })
}) {}
