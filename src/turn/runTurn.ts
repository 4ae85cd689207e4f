import { Effect, type Exit } from "effect"
import { MemoryCommits } from "../memory/MemoryCommits.js"
import type { SessionError } from "../session/SessionStore.js"
import { MessageQueue, type QueuedMessage } from "./MessageQueue.js"
import { noUsage, type TurnEvent, turnIdsOf } from "./TurnEvent.js"
import { encodeFailure, SessionNotWritten } from "./TurnFailure.js"
import { type ActiveSession, TurnRunner } from "./TurnRunner.js"
import type { TurnOutcome } from "./turnTally.js"
import { turnAnnotations } from "./turnLog.js"

/** What a caller of runTurn supplies: where the turn writes, where its events go, and its own bookkeeping. */
export interface TurnDriving {
  /**
   * The session the turn of `message` writes to (its conversation's), asked for once the message is taken (the
   * runtime's `/new` may have changed it, or opens it now).
   */
  readonly session: (message: QueuedMessage) => Effect.Effect<ActiveSession, SessionError>
  /** Each event of the turn (named with its turn and conversation), with the message that started it. */
  readonly emit: (message: QueuedMessage, event: TurnEvent) => Effect.Effect<void>
  /** A message of the turn is in the session (or was refused and told so): a durable one leaves the inbox. */
  readonly recorded?: ((message: QueuedMessage) => Effect.Effect<void>) | undefined
  /** The caller's own bookkeeping once the turn is over, however it ended (interrupted too). */
  readonly ended?: ((message: QueuedMessage, exit: Exit.Exit<TurnOutcome>) => Effect.Effect<void>) | undefined
}

/**
 * A turn that could not be written (the session file, a full disk): the turn did not happen, and its channel is told
 * why in one line (an error event, then finish), not left waiting. The message counts as recorded: its sender was told
 * it was not (send it again), so no restart answers it late.
 */
const notWritten = (
  message: QueuedMessage,
  error: SessionError,
  emit: (event: TurnEvent) => Effect.Effect<void>,
  recorded: (message: QueuedMessage) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    yield* Effect.logError(`kern: a turn failed: ${error.message}`)
    yield* recorded(message)
    const failure = new SessionNotWritten({ reason: error.reason ?? "io", message: error.message })
    const ids = turnIdsOf(message)
    yield* emit({ type: "error", ...ids, message: error.message, failure: encodeFailure(failure) })
    yield* emit({ type: "finish", ...ids, reply: "", steps: 0, usage: noUsage, delivered: false })
    return { reply: "", delivered: false, steps: 0, modelMs: 0, usage: noUsage, failure } satisfies TurnOutcome
  })

/**
 * The one driver of a turn, for the library's Agent, the running agent and a one-shot `kern chat`: takes the next
 * queued message, runs its turn, ends it in the queue, commits the memory, and returns how it ended. A failure is a
 * value (`outcome.failure`), a session that cannot be written included: the runtime goes on with the next message.
 */
export const makeRunTurn = Effect.gen(function*() {
  const runner = yield* TurnRunner
  const queue = yield* MessageQueue
  const memory = yield* MemoryCommits
  return (driving: TurnDriving): Effect.Effect<TurnOutcome> =>
    Effect.gen(function*() {
      const message = yield* queue.next
      const emit = (event: TurnEvent) => driving.emit(message, event)
      const recorded = driving.recorded ?? (() => Effect.void)
      const ended = driving.ended ?? (() => Effect.void)
      return yield* Effect.flatMap(driving.session(message), (session) =>
        runner.run({ message, session, emit, recorded }).pipe(
          Effect.tap(() => memory.afterTurn),
          Effect.annotateLogs(turnAnnotations(message, session.id))
        )).pipe(
          Effect.ensuring(queue.endTurn(message.conversation)),
          Effect.catchAll((error) => notWritten(message, error, emit, recorded)),
          Effect.onExit((exit) => ended(message, exit))
        )
    })
})
