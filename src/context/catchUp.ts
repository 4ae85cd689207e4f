import { Effect, Queue, Ref, Stream, SubscriptionRef } from "effect"
import type { SessionState } from "./plan.js"
import type { SessionHistory } from "./SessionHistory.js"

/**
 * Summaries the background catch-up writes per pass: between passes it lets go of the pass lock and the state is
 * refreshed, so the window uses what is summarized so far and a turn's own pass never waits long behind it.
 */
export const catchUpChunk = 12

/** A catch-up pass's bounds: summaries written at most, and where its forced segmentation stops. */
export interface CatchUpChunk {
  readonly limit: number
  readonly until: number
}

/** A session whose summaries are behind, for the catch-up: its history is the one its turns use. */
interface Backlogged {
  readonly sessionId: string
  readonly history: SessionHistory
}

export interface CatchUpDeps {
  readonly stateOf: (sessionId: string) => Effect.Effect<SessionState>
  /** One forced pass under the context's pass lock, bounded by `chunk`, its state refreshed after. */
  readonly pass: (sessionId: string, history: SessionHistory, chunk: CatchUpChunk) => Effect.Effect<void>
}

/** What a catch-up pass changed: the segments there are and how many are summarized. */
const progressOf = (state: SessionState) =>
  `${state.segments.length}:${state.segments.filter((segment) => segment.summary !== null).length}`

/**
 * The context's catch-up of sessions whose summaries are far behind (a long session kern never summarized, an
 * outage's backlog): queued after their turns have answered, built by whoever runs `catchUp` (a long-lived agent).
 */
export const makeCatchUp = (deps: CatchUpDeps) =>
  Effect.gen(function*() {
    const backlog = yield* Queue.unbounded<Backlogged>()
    const queued = yield* Ref.make(new Set<string>())
    // Sessions queued or being caught up: what `caughtUp` waits to be none.
    const outstanding = yield* SubscriptionRef.make(0)

    /** Queues a session for the catch-up, once while it waits. */
    const enqueue = (sessionId: string, history: SessionHistory) =>
      Effect.flatMap(
        Ref.modify(queued, (set) => set.has(sessionId) ? [false, set] : [true, new Set(set).add(sessionId)]),
        (fresh) =>
          fresh ? Effect.zipRight(SubscriptionRef.update(outstanding, (n) => n + 1), Queue.offer(backlog, { sessionId, history })) : Effect.void
      )

    /** Summarizes a backlogged session a chunk at a time until a pass changes nothing (all done, or the gate closed). */
    const catchUpOne = ({ history, sessionId }: Backlogged) =>
      Effect.gen(function*() {
        yield* Ref.update(queued, (set) => {
          const next = new Set(set)
          next.delete(sessionId)
          return next
        })
        for (;;) {
          const before = progressOf(yield* deps.stateOf(sessionId))
          // Everything before the latest turn: the turn itself is left to the passes after turns, so the cut can
          // stay before it (as the window had it) rather than jump to the next turn's own message.
          const window = yield* history.window
          const until = window.base + window.isUser.lastIndexOf(true)
          yield* deps.pass(sessionId, history, { limit: catchUpChunk, until })
          if (progressOf(yield* deps.stateOf(sessionId)) === before) return
        }
      }).pipe(
        Effect.ensuring(SubscriptionRef.update(outstanding, (n) => n - 1)),
        Effect.withSpan("kern.context.catchUp", { attributes: { sessionId } })
      )

    /**
     * The background catch-up of long-lived agents, built after the turns have answered (resumable: what is written
     * stays in kern.db, and the next process continues from there). Runs until interrupted.
     */
    const catchUp: Effect.Effect<never> = Effect.forever(Effect.flatMap(Queue.take(backlog), catchUpOne))

    /**
     * The catch-up of the sessions queued so far, to its end, then returns: what `catchUp` does, once, for a program
     * that embeds the context and drives it itself.
     */
    const catchUpQueued: Effect.Effect<void> = Effect.flatMap(
      Queue.takeAll(backlog),
      (all) => Effect.forEach(all, catchUpOne, { discard: true })
    )

    /** Waits until no session is queued for the catch-up or being caught up (where `catchUp` runs). */
    const caughtUp: Effect.Effect<void> = outstanding.changes.pipe(Stream.takeUntil((n) => n === 0), Stream.runDrain)

    return { enqueue, catchUp, catchUpQueued, caughtUp } as const
  })
