import { Clock, Duration, Effect, Exit, Fiber, FiberSet, HashMap, HashSet, Option, Queue, Ref } from "effect"
import { backoff } from "../../channels/telegram/TelegramChannel.js"
import type { HostAgentError } from "../AgentHandle.js"

interface Due {
  readonly dueMs: number
  readonly why: string
}

/** Wakes of one agent that failed in a row, and the time before which it is not tried again. */
interface Backoff {
  readonly failures: number
  readonly untilMs: number
}

const earliestOf = (map: HashMap.HashMap<string, Due>) =>
  HashMap.reduce(map, Option.none<number>(), (min, due) => Option.isSome(min) && min.value <= due.dueMs ? min : Option.some(due.dueMs))

/**
 * The passive agents' due times, for the whole host: one fiber sleeps (on the Clock) until the earliest and wakes the
 * agents due then, so each agent's own Scheduler, started by the wake, fires the run (posted exactly once through its
 * Followups, by its schedule and due time; a run missed while the whole host was down goes by its misfire policy, as
 * for an agent that was down). A due time is forgotten once its wake is asked for. A failed wake leaves the agent
 * passive, and it is read again with the same due time: that time is put off by a backoff that grows with each failure
 * in a row (a folder another `kern start` holds, a broken config), never tried again at once in a loop. No timer or
 * fiber per agent: 100 passive agents cost 100 map entries and one sleep.
 */
export const makeDueTimes = (wake: (name: string, reason: string) => Effect.Effect<void, HostAgentError>) =>
  Effect.gen(function*() {
    const dues = yield* Ref.make(HashMap.empty<string, Due>())
    const backoffs = yield* Ref.make(HashMap.empty<string, Backoff>())
    /** Agents whose wake is under way: not fired again until it has ended (and, if it failed, its backoff is known). */
    const waking = yield* Ref.make(HashSet.empty<string>())
    const changed = yield* Queue.sliding<void>(1)
    // Wakes run beside the timer, in the host's scope: a slow wake never holds the others back.
    const wakes = yield* FiberSet.make()
    const signal = Queue.offer(changed, undefined)

    /** A passive agent's due time (none: nothing is due for it); put off while its wakes fail. */
    const set = (name: string, dueMs: Option.Option<number>, why: string) =>
      Effect.gen(function*() {
        const until = Option.match(HashMap.get(yield* Ref.get(backoffs), name), { onNone: () => 0, onSome: (b) => b.untilMs })
        yield* Ref.update(dues, (map) =>
          Option.match(dueMs, {
            onNone: () => HashMap.remove(map, name),
            onSome: (ms) => HashMap.set(map, name, { dueMs: Math.max(ms, until), why })
          }))
        yield* signal
      })

    /** The agent is not passive any more: its own Scheduler keeps its times. */
    const clear = (name: string) => Effect.zipRight(Ref.update(dues, HashMap.remove(name)), signal)

    const fire = (name: string, due: Due) =>
      FiberSet.run(
        wakes,
        Effect.gen(function*() {
          const exit = yield* Effect.exit(wake(name, due.why))
          if (Exit.isSuccess(exit)) {
            yield* Ref.update(backoffs, HashMap.remove(name))
            return
          }
          const before = HashMap.get(yield* Ref.get(backoffs), name)
          const failures = Option.match(before, { onNone: () => 1, onSome: (b) => b.failures + 1 })
          const wait = backoff(failures)
          yield* Effect.logWarning(`kern: host: could not wake ${name} (${due.why}); trying again in ${Duration.format(wait)}`, exit.cause)
          const untilMs = (yield* Clock.currentTimeMillis) + Duration.toMillis(wait)
          yield* Ref.update(backoffs, HashMap.set(name, { failures, untilMs }))
          // Read again meanwhile (the failed wake left it passive): its due time is put off too. If not yet, `set` will.
          yield* Ref.update(dues, (map) => HashMap.modify(map, name, (d) => ({ ...d, dueMs: Math.max(d.dueMs, untilMs) })))
        }).pipe(
          Effect.ensuring(Effect.zipRight(Ref.update(waking, HashSet.remove(name)), signal)),
          Effect.withSpan("kern.host.dueWake", { attributes: { agent: name } })
        )
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
        const busy = yield* Ref.get(waking)
        const ready = HashMap.filter(all, (due, name) => due.dueMs <= nowMs && !HashSet.has(busy, name))
        if (HashMap.size(ready) > 0) {
          yield* Ref.update(dues, (map) => HashMap.removeMany(map, HashMap.keys(ready)))
          yield* Ref.update(waking, (set) => HashSet.union(set, HashSet.fromIterable(HashMap.keys(ready))))
          for (const [name, due] of ready) yield* fire(name, due)
          continue
        }
        // An agent whose wake is under way waits for that wake's end (which signals), not for a timer.
        const earliest = earliestOf(HashMap.filter(all, (_, name) => !HashSet.has(busy, name)))
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
