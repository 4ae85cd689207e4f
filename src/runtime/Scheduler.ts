import { Clock, Duration, Effect, Either, Layer, Option } from "effect"
import { localIso } from "../session/envelope.js"
import { Followups } from "../tools/Followups.js"
import { catchUp, parseCron } from "../tools/schedules/dueTimes.js"
import { lateToleranceMs, runKey, type ScheduleRow } from "../tools/schedules/ScheduleRow.js"
import { ScheduleStore } from "../tools/schedules/ScheduleStore.js"

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
 */
const make = (pollInterval: Duration.Duration) =>
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

    const run = Effect.gen(function*() {
      while (true) {
        const ok = yield* tick.pipe(Effect.catchAll((error) =>
          Effect.as(Effect.logWarning(`kern: the schedules could not be read: ${error.message}; retrying shortly`), false)
        ))
        const wait = yield* untilDue(ok)
        if (Option.isSome(wait) && wait.value === 0) continue
        const due = Option.match(wait, { onNone: () => Effect.never, onSome: (ms) => Effect.sleep(Duration.millis(ms)) })
        yield* Effect.raceAll([due, poll, store.awaitChange])
      }
    })

    return { run, tick } as const
  })

export class Scheduler extends Effect.Service<Scheduler>()("kern/runtime/Scheduler", { effect: make(schedulePollInterval) }) {
  /** A Scheduler polling kern.db at another interval: for tests whose simulated hours need no poll every 10 s. */
  static readonly layerPolling = (pollInterval: Duration.DurationInput) =>
    Layer.effect(Scheduler, Effect.map(make(Duration.decode(pollInterval)), Scheduler.make))
}
