import { Cause, Clock, Duration, Effect, Either, Layer, Option, Ref } from "effect"
import { localIso } from "../session/envelope.js"
import { Followups } from "../tools/Followups.js"
import { catchUp, parseCron } from "../tools/schedules/dueTimes.js"
import { lateToleranceMs, runKey, type ScheduleRow } from "../tools/schedules/ScheduleRow.js"
import { ScheduleStore } from "../tools/schedules/ScheduleStore.js"
import { HeartbeatSchedule } from "./HeartbeatSchedule.js"

/** How often kern.db is read for a schedule another process (`kern schedule add` beside the agent) added. */
export const schedulePollInterval = Duration.seconds(10)

/** The message a run's turn starts with: which schedule, when it was due, and whether it comes late. */
export const firingText = (row: ScheduleRow, dueMs: number, late: boolean, missedBefore: number): string => {
  const notes = [
    late ? "late: the agent was down when it was due" : undefined,
    missedBefore > 0 ? `${missedBefore} earlier run${missedBefore === 1 ? "" : "s"} missed while the agent was down` : undefined
  ].filter((note) => note !== undefined)
  return `[schedule ${row.id}, due ${localIso(dueMs, row.timezone)}${notes.length === 0 ? "" : `; ${notes.join("; ")}`}] ${row.prompt}`
}

/**
 * The running agent's schedules: one loop for all of them (no fiber or timer per schedule), asleep until the earliest
 * is due, woken early when this process adds or removes one and every `schedulePollInterval` for what other processes
 * changed. A due run is posted as a turn in its schedule's conversation through Followups, keyed by schedule and due
 * time, so it fires exactly once even when the agent dies between posting it and recording it (the next start finds
 * the key posted and only records it); runs that came due while the agent was down go by the schedule's misfire policy,
 * and the skipped ones are recorded as missed.
 *
 * The heartbeat is one of its schedules: due every heartbeatInterval minutes (its due time kept in kern.db by
 * HeartbeatLog, across a restart), fired by this loop (HeartbeatSchedule.fire: activeHours, no pile-up, the cheap-first
 * skip), with no timer of its own. A Scheduler without one (`layerPolling`, for tests of schedules alone) fires none.
 */
const make = (pollInterval: Duration.Duration, heartbeat: Option.Option<HeartbeatSchedule>) =>
  Effect.gen(function*() {
    const store = yield* ScheduleStore
    const followups = yield* Followups

    /** One schedule's due runs: fired or missed by its policy, then recorded with its next due time. */
    const settleOne = (row: ScheduleRow, nowMs: number) =>
      Effect.gen(function*() {
        if (row.nextDueMs === null) return
        const cron = row.kind === "cron" ? parseCron(row.cron ?? "", row.timezone) : Either.right(undefined)
        if (Either.isLeft(cron)) {
          yield* Effect.logWarning(`kern: schedule ${row.id} cannot be read (${cron.left}); it will not fire again`)
          return yield* store.settle(row.id, row.nextDueMs, { fired: [], missed: [] }, null)
        }
        const plan = catchUp({ cron: cron.right, nextDueMs: row.nextDueMs, misfire: row.misfire, graceMs: row.graceMs }, nowMs, lateToleranceMs)
        const origin = { interface: row.originInterface, channel: row.originChannel, userId: row.originUserId }
        let missedBefore = plan.missedCount
        for (const run of plan.fire) {
          yield* followups.post(runKey(row.id, run.dueMs), origin, firingText(row, run.dueMs, run.late, missedBefore))
          missedBefore = 0
        }
        yield* store.settle(row.id, row.nextDueMs, { fired: plan.fire.map((run) => run.dueMs), missed: plan.missed }, plan.next)
        if (plan.missedCount > 0) {
          yield* Effect.logWarning(
            `kern: schedule ${row.id} missed ${plan.missedCount} run${plan.missedCount === 1 ? "" : "s"} while the agent was down (misfire ${row.misfire})`
          )
        }
      }).pipe(Effect.withSpan("kern.schedules.fire", { attributes: { id: row.id } }))

    /** Every schedule due now; whether all of them were settled (a failure is logged and retried at the next poll). */
    const tick = Effect.gen(function*() {
      const nowMs = yield* Clock.currentTimeMillis
      const due = yield* store.due(nowMs)
      const settled = yield* Effect.forEach(due, (row) =>
        settleOne(row, nowMs).pipe(
          Effect.as(true),
          Effect.catchAll((error) =>
            Effect.as(Effect.logWarning(`kern: schedule ${row.id} could not fire: ${error.message}; retrying shortly`), false)
          )
        ))
      return settled.every(Boolean)
    })

    /** How long until the earliest due time (none: no schedule has a run left); a failure retries at the next poll. */
    const untilDue = (ok: boolean) =>
      Effect.gen(function*() {
        if (!ok) return Option.none<number>()
        const earliest = yield* store.earliest
        const nowMs = yield* Clock.currentTimeMillis
        return Option.map(earliest, (due) => Math.max(0, due - nowMs))
      }).pipe(Effect.orElseSucceed(() => Option.none<number>()))

    // Polling for what other processes wrote runs on the real clock: their writes happen in real time, and a test's
    // simulated hours then cost no wake-up every 10 s (the due times themselves are on the Clock, TestClock included).
    const liveClock = Clock.make()
    const poll = Effect.sleep(pollInterval).pipe(Effect.withClock(liveClock))

    /** When the heartbeat is next due (none: no heartbeat); set as the loop starts and each time it fires. */
    const heartbeatDue = yield* Ref.make(Option.none<number>())

    /**
     * The heartbeat's tick when it is due. A failure of its own is logged and the next one is due an interval later
     * (the schedules go on); so is a defect, which no longer stops a fiber of its own.
     */
    const heartbeatTick = Option.match(heartbeat, {
      onNone: () => Effect.void,
      onSome: (beat) =>
        Effect.gen(function*() {
          const due = yield* Ref.get(heartbeatDue)
          const nowMs = yield* Clock.currentTimeMillis
          if (Option.isNone(due) || nowMs < due.value) return
          const next = yield* beat.fire(nowMs).pipe(
            Effect.catchAllCause((cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.failCause(cause)
                : Effect.as(Effect.logWarning("kern: the heartbeat's tick failed", cause), nowMs + beat.intervalMs)
            )
          )
          yield* Ref.set(heartbeatDue, Option.some(next))
        }).pipe(Effect.withSpan("kern.schedules.heartbeat"))
    })

    /** The earlier of two waits (none: nothing due). */
    const sooner = (a: Option.Option<number>, b: Option.Option<number>) =>
      Option.isNone(a) ? b : Option.isNone(b) ? a : Option.some(Math.min(a.value, b.value))

    const loop = Effect.gen(function*() {
      while (true) {
        const ok = yield* tick.pipe(Effect.catchAll((error) =>
          Effect.as(Effect.logWarning(`kern: the schedules could not be read: ${error.message}; retrying shortly`), false)
        ))
        yield* heartbeatTick
        const nowMs = yield* Clock.currentTimeMillis
        const beat = Option.map(yield* Ref.get(heartbeatDue), (due) => Math.max(0, due - nowMs))
        const wait = sooner(yield* untilDue(ok), beat)
        if (Option.isSome(wait) && wait.value === 0) continue
        const due = Option.match(wait, { onNone: () => Effect.never, onSome: (ms) => Effect.sleep(Duration.millis(ms)) })
        yield* Effect.raceAll([due, poll, store.awaitChange])
      }
    })

    const run = Option.match(heartbeat, {
      onNone: () => loop,
      onSome: (beat) =>
        Effect.gen(function*() {
          yield* Ref.set(heartbeatDue, yield* beat.start)
          return yield* loop
        }).pipe(Effect.ensuring(beat.stopped))
    })

    return { run, tick } as const
  })

export class Scheduler extends Effect.Service<Scheduler>()("kern/runtime/Scheduler", {
  effect: Effect.flatMap(HeartbeatSchedule, (heartbeat) => make(schedulePollInterval, Option.some(heartbeat)))
}) {
  /**
   * A Scheduler polling kern.db at another interval, with the heartbeat or without: for tests whose simulated hours
   * need no poll every 10 s.
   */
  static readonly layerPolling = (pollInterval: Duration.DurationInput, heartbeat: Option.Option<HeartbeatSchedule> = Option.none()) =>
    Layer.effect(Scheduler, Effect.map(make(Duration.decode(pollInterval), heartbeat), Scheduler.make))
}
