import { Cause, Deferred, Effect, Exit, Fiber, Option, Ref } from "effect"
import { mainConversation } from "../kernel/Audience.js"
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
  /** The conversation it belongs to (`main`: the operator's; Audience.ts). */
  readonly conversation: string
}

/** A running turn's side of its stop: whether it was stopped, and the work a stop ends. */
export interface TurnStop {
  /** Who stopped the turn, once someone has. */
  readonly stopped: Effect.Effect<Option.Option<Stopped>>
  /**
   * Runs `effect` beside `guard` (the model stream's watchdog; by default nothing) until one of them ends: `effect`'s
   * exit is the result, or `guard`'s failure, or `Stopped` when the turn is stopped meanwhile (or was already). The
   * other one is interrupted (a tool's processes killed). A stop interrupts the guard's fiber, so the turn's work pays
   * nothing per step or per streamed part for being stoppable.
   */
  readonly guarded: <A, E, R, E2 = never, R2 = never>(
    effect: Effect.Effect<A, E, R>,
    guard?: Effect.Effect<never, E2, R2>
  ) => Effect.Effect<A, E | E2 | Stopped, R | R2>
}

interface Entry {
  readonly turn: RunningTurn
  readonly signal: Deferred.Deferred<Stopped>
  /** The fiber of the guard running now, which a stop interrupts; none between guarded sections. */
  readonly armed: Ref.Ref<Option.Option<Fiber.RuntimeFiber<unknown, unknown>>>
}

/** Who stopped the turn, if anyone has yet. */
const stoppedOf = (signal: Deferred.Deferred<Stopped>): Effect.Effect<Option.Option<Stopped>> =>
  Effect.flatMap(Deferred.poll(signal), Option.match({ onNone: () => Effect.succeedNone, onSome: Effect.asSome }))

const makeTurnStop = ({ armed, signal }: Entry): TurnStop => {
  const stopped = stoppedOf(signal)
  // Armed before the signal is looked at: a stop that comes before the arming is seen by the look, one after it
  // interrupts the guard (stopWhere completes the signal first, then interrupts what is armed).
  const arm = <E2, R2>(guard: Effect.Effect<never, E2, R2>): Effect.Effect<never, E2 | Stopped, R2> =>
    Effect.withFiberRuntime((fiber) =>
      Effect.zipRight(
        Ref.set(armed, Option.some(fiber)),
        Effect.flatMap(stopped, (by): Effect.Effect<never, E2 | Stopped, R2> => Option.isSome(by) ? Effect.fail(by.value) : guard)
      )
    )
  // The guard interrupted by a stop ends the work as Stopped; interrupted otherwise (the turn's own fiber interrupted),
  // the interruption stands.
  const guardEnded = <E2>(exit: Exit.Exit<never, E2 | Stopped>) =>
    Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
      ? Effect.flatMap(stopped, Option.match({ onNone: () => Effect.failCause(exit.cause), onSome: Effect.fail }))
      : exit
  const guarded = <A, E, R, E2 = never, R2 = never>(
    effect: Effect.Effect<A, E, R>,
    guard: Effect.Effect<never, E2, R2> = Effect.never
  ): Effect.Effect<A, E | E2 | Stopped, R | R2> =>
    Effect.raceWith(effect, arm(guard), {
      onSelfDone: (exit, guardFiber) => Effect.zipRight(Fiber.interrupt(guardFiber), Effect.zipRight(Ref.set(armed, Option.none()), exit)),
      onOtherDone: (exit, work) => Effect.zipRight(Fiber.interrupt(work), Effect.zipRight(Ref.set(armed, Option.none()), guardEnded(exit)))
    })
  return { stopped, guarded }
}

/**
 * The running turns and the signal of each: stopping a turn completes its signal and interrupts the guard it runs
 * beside its work (TurnStop.guarded), and the turn ends itself at the point it has reached (the model's stream cut,
 * running tool calls interrupted and their processes killed), records what was said so far and reports `Stopped`.
 * Nothing here interrupts the runtime's fiber: an interrupted turn is one a restart must answer again, a stopped one
 * is over.
 */
export class TurnStops extends Effect.Service<TurnStops>()("kern/turn/TurnStops", {
  effect: Effect.gen(function*() {
    const running = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())

    /** The turn of `message` can be stopped while `use` runs; `use` gets its side of the stop. */
    const during = <A, E, R>(
      message: Pick<QueuedMessage, "turnId" | "interface" | "channel" | "userId"> & { readonly conversation?: string | undefined },
      use: (stop: TurnStop) => Effect.Effect<A, E, R>
    ) =>
      Effect.acquireUseRelease(
        Effect.gen(function*() {
          const turn: RunningTurn = {
            turnId: message.turnId,
            conversationId: conversationIdOf(message),
            userId: message.userId,
            conversation: message.conversation ?? mainConversation
          }
          const entry: Entry = { turn, signal: yield* Deferred.make<Stopped>(), armed: yield* Ref.make(Option.none<Fiber.RuntimeFiber<unknown, unknown>>()) }
          yield* Ref.update(running, (map) => new Map([...map, [turn.turnId, entry]]))
          return makeTurnStop(entry)
        }),
        use,
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
          if (!(yield* Deferred.succeed(entry.signal, stoppedBy(by)))) continue
          stopped.push(entry.turn)
          const guard = yield* Ref.get(entry.armed)
          if (Option.isSome(guard)) yield* Fiber.interruptAsFork(guard.value, yield* Effect.fiberId)
        }
        return stopped as ReadonlyArray<RunningTurn>
      }).pipe(Effect.withSpan("kern.turn.stop"))

    /** Stops one turn by its id. */
    const stop = (turnId: string, by: string) => stopWhere((turn) => turn.turnId === turnId, by)

    /**
     * Stops the running turn of the operator's conversation (what the TUI's `/stop` and `POST /stop` mean): another
     * person's turn running beside it goes on (it can be stopped by its id, or from its chat).
     */
    const stopOperators = (by: string) => stopWhere((turn) => turn.conversation === mainConversation, by)

    return {
      during,
      stop,
      stopWhere,
      stopOperators,
      running: Effect.map(Ref.get(running), (map) => [...map.values()].map((entry) => entry.turn))
    } as const
  })
}) {}
