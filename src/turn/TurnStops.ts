import { Deferred, Effect, Ref } from "effect"
import { conversationIdOf } from "./TurnEvent.js"
import type { QueuedMessage } from "./MessageQueue.js"
import { type Stopped, stoppedBy } from "./TurnFailure.js"

/** A turn that can be stopped: what it is known by and whose it is. */
export interface RunningTurn {
  readonly turnId: string
  /** `<interface>:<channel>` of the message that started it. */
  readonly conversationId: string
  /** The user whose message started it. */
  readonly userId: string
}

interface Entry {
  readonly turn: RunningTurn
  readonly signal: Deferred.Deferred<Stopped>
}

/**
 * The running turns and the signal each races with, as the watchdog's timer is raced (TurnRunner): stopping a turn
 * completes its signal, and the turn ends itself at the point it has reached (the model's stream cut, running tool
 * calls interrupted and their processes killed), records what was said so far and reports `Stopped`. Nothing here
 * interrupts the runtime's fiber: an interrupted turn is one a restart must answer again, a stopped one is over.
 */
export class TurnStops extends Effect.Service<TurnStops>()("kern/turn/TurnStops", {
  effect: Effect.gen(function*() {
    const running = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())

    /** The turn of `message` can be stopped while the scope is open; its signal completes with who stopped it. */
    const register = (message: QueuedMessage) =>
      Effect.acquireRelease(
        Effect.gen(function*() {
          const signal = yield* Deferred.make<Stopped>()
          const turn: RunningTurn = { turnId: message.turnId, conversationId: conversationIdOf(message), userId: message.userId }
          yield* Ref.update(running, (map) => new Map([...map, [turn.turnId, { turn, signal }]]))
          return signal
        }),
        () =>
          Ref.update(running, (map) => {
            const next = new Map(map)
            next.delete(message.turnId)
            return next
          })
      )

    /** Stops the running turns `which` picks, as `by`; the turns it stopped (none when nothing matched). */
    const stopWhere = (which: (turn: RunningTurn) => boolean, by: string) =>
      Effect.gen(function*() {
        const entries = [...(yield* Ref.get(running)).values()].filter((entry) => which(entry.turn))
        const stopped: Array<RunningTurn> = []
        for (const entry of entries) {
          // A turn asked twice stops once, and says who asked first.
          if (yield* Deferred.succeed(entry.signal, stoppedBy(by))) stopped.push(entry.turn)
        }
        return stopped as ReadonlyArray<RunningTurn>
      }).pipe(Effect.withSpan("kern.turn.stop"))

    /** Stops one turn by its id. */
    const stop = (turnId: string, by: string) => stopWhere((turn) => turn.turnId === turnId, by)

    return {
      register,
      stop,
      stopWhere,
      running: Effect.map(Ref.get(running), (map) => [...map.values()].map((entry) => entry.turn))
    } as const
  })
}) {}
