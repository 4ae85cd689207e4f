import { Clock, Duration, Effect, Exit, Fiber, FiberSet, HashMap, Option, Queue, Ref } from "effect"
import { backoff } from "../../channels/telegram/TelegramChannel.js"
import type { WakeFailed } from "./HostAgents.js"

interface Due {
  readonly dueMs: number
  readonly why: string
  /** Wakes that failed in a row for this due time: the next try waits longer. */
  readonly failures: number
}

const earliestOf = (map: HashMap.HashMap<string, Due>) =>
  HashMap.reduce(map, Option.none<number>(), (min, due) => Option.isSome(min) && min.value <= due.dueMs ? min : Option.some(due.dueMs))

/**
 * The passive agents' due times, for the whole host: one fiber sleeps (on the Clock) until the earliest and wakes the
 * agents due then, so each agent's own Scheduler, started by the wake, fires the run (posted exactly once through its
 * Followups, by its schedule and due time; a run missed while the whole host was down goes by its misfire policy, as
 * for an agent that was down). A due time is forgotten once its wake is asked for; a failed wake is tried again after
 * a backoff. No timer or fiber per agent: 100 passive agents cost 100 map entries and one sleep.
 */
export const makeDueTimes = (wake: (name: string, reason: string) => Effect.Effect<void, WakeFailed>) =>
  Effect.gen(function*() {
    const dues = yield* Ref.make(HashMap.empty<string, Due>())
    const changed = yield* Queue.sliding<void>(1)
    // Wakes run beside the timer, in the host's scope: a slow wake never holds the others back.
    const wakes = yield* FiberSet.make()
    const signal = Queue.offer(changed, undefined)

    /** A passive agent's due time (none: nothing is due for it). */
    const set = (name: string, dueMs: Option.Option<number>, why: string) =>
      Ref.update(dues, (map) =>
        Option.match(dueMs, {
          onNone: () => HashMap.remove(map, name),
          onSome: (ms) => HashMap.set(map, name, { dueMs: ms, why, failures: 0 })
        })).pipe(Effect.zipRight(signal))

    /** The agent is not passive any more: its own Scheduler keeps its times. */
    const clear = (name: string) => Effect.zipRight(Ref.update(dues, HashMap.remove(name)), signal)

    const fire = (name: string, due: Due) =>
      FiberSet.run(
        wakes,
        Effect.gen(function*() {
          const exit = yield* Effect.exit(wake(name, due.why))
          if (Exit.isSuccess(exit)) return
          const failures = due.failures + 1
          const wait = backoff(failures)
          yield* Effect.logWarning(`kern: host: could not wake ${name} (${due.why}); trying again in ${Duration.format(wait)}`, exit.cause)
          const retryAt = (yield* Clock.currentTimeMillis) + Duration.toMillis(wait)
          // Unless the agent was woken (or given a new due time) meanwhile.
          yield* Ref.update(dues, (map) => HashMap.has(map, name) ? map : HashMap.set(map, name, { ...due, dueMs: retryAt, failures }))
          yield* signal
        }).pipe(Effect.withSpan("kern.host.dueWake", { attributes: { agent: name } }))
      )

    /**
     * The timer, forked once in the host's scope. Its one sleep is made again only when the earliest due time moves
     * (not at each agent read or woken), so a host reading 100 agents at start does not make 100 timers one after another.
     */
    const run = Effect.gen(function*() {
      let sleeper: { readonly at: number; readonly fiber: Fiber.RuntimeFiber<void> } | undefined
      while (true) {
        const nowMs = yield* Clock.currentTimeMillis
        const all = yield* Ref.get(dues)
        const ready = HashMap.filter(all, (due) => due.dueMs <= nowMs)
        if (HashMap.size(ready) > 0) {
          yield* Ref.update(dues, (map) => HashMap.removeMany(map, HashMap.keys(ready)))
          for (const [name, due] of ready) yield* fire(name, due)
          continue
        }
        const earliest = earliestOf(all)
        if (sleeper !== undefined && (Option.isNone(earliest) || sleeper.at !== earliest.value)) {
          yield* Fiber.interrupt(sleeper.fiber)
          sleeper = undefined
        }
        if (sleeper === undefined && Option.isSome(earliest)) {
          sleeper = { at: earliest.value, fiber: yield* Effect.fork(Effect.sleep(Duration.millis(earliest.value - nowMs))) }
        }
        const changes = Queue.take(changed)
        yield* sleeper === undefined ? changes : Effect.race(Fiber.join(sleeper.fiber), changes)
      }
    })

    /** How many passive agents have a due time, and the earliest. */
    const status = Effect.map(Ref.get(dues), (map) => ({
      count: HashMap.size(map),
      nextDueMs: earliestOf(map)
    }))

    return { set, clear, run, status } as const
  })
