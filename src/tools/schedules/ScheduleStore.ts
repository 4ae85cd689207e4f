import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Queue, Schema } from "effect"
import { storageProblem } from "../../storage/diskFull.js"
import { transaction } from "../../storage/transaction.js"
import type { ScheduleDraft } from "./newSchedule.js"
import { ScheduleRow } from "./ScheduleRow.js"

export class ScheduleError extends Schema.TaggedError<ScheduleError>()("ScheduleError", {
  message: Schema.String
}) {}

/** Where each firing comes from, and who added the schedule. */
export interface ScheduleOwner {
  readonly origin: { readonly interface: string; readonly channel: string; readonly userId: string }
  readonly deliverTo: string | null
  readonly createdBy: string
}

/** A schedule with what became of its runs: how many fired and were missed, and the latest of each. */
export class ScheduleWithRuns extends Schema.Class<ScheduleWithRuns>("ScheduleWithRuns")({
  ...ScheduleRow.fields,
  fired: Schema.Number,
  missed: Schema.Number,
  lastFiredMs: Schema.NullOr(Schema.Number),
  lastMissedMs: Schema.NullOr(Schema.Number)
}) {}

/** Missed runs across every schedule, for `kern status`. */
export class MissedSummary extends Schema.Class<MissedSummary>("MissedSummary")({
  schedules: Schema.Number,
  active: Schema.Number,
  missed: Schema.Number,
  lastMissedMs: Schema.NullOr(Schema.Number)
}) {}

const decodeRows = Schema.decodeUnknown(Schema.Array(ScheduleRow))
const decodeWithRuns = Schema.decodeUnknown(Schema.Array(ScheduleWithRuns))
const decodeSummary = Schema.decodeUnknown(Schema.Array(MissedSummary))
const decodeHeartbeatNext = Schema.decodeUnknown(Schema.Array(Schema.Struct({ nextAtMs: Schema.NullOr(Schema.Number) })))
const decodeEarliest = Schema.decodeUnknown(Schema.Array(Schema.Struct({ earliest: Schema.NullOr(Schema.Number) })))

/**
 * The schedules in kern.db: what the schedule tool, `kern schedule`, the HTTP API and the running agent's Scheduler
 * read and write. kern.db is the truth: a schedule added by another process (the CLI beside a running agent) is
 * seen at the Scheduler's next poll; one added through this service wakes this process's Scheduler at once (`changed`).
 */
export class ScheduleStore extends Effect.Service<ScheduleStore>()("kern/tools/ScheduleStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const changes = yield* Queue.sliding<void>(1)
    const failed = (what: string) => (error: { readonly message: string }) =>
      new ScheduleError({ message: `could not ${what} the schedules in kern.db: ${storageProblem(error)}` })
    const changed = Queue.offer(changes, undefined)

    const add = (draft: ScheduleDraft, owner: ScheduleOwner) =>
      Effect.gen(function*() {
        const createdAtMs = yield* Clock.currentTimeMillis
        const rows = yield* sql`INSERT INTO schedules ${
          sql.insert({
            kind: draft.kind,
            cron: draft.cron,
            atMs: draft.atMs,
            timezone: draft.timezone,
            prompt: draft.prompt,
            misfire: draft.misfire,
            graceMs: draft.graceMs,
            deliverTo: owner.deliverTo,
            originInterface: owner.origin.interface,
            originChannel: owner.origin.channel,
            originUserId: owner.origin.userId,
            createdBy: owner.createdBy,
            createdAtMs,
            nextDueMs: draft.nextDueMs
          })
        } RETURNING *`.pipe(Effect.flatMap(decodeRows))
        const row = rows[0]
        if (row === undefined) return yield* new ScheduleError({ message: "kern.db did not return the stored schedule" })
        yield* changed
        return row
      }).pipe(Effect.mapError(failed("write")), Effect.withSpan("kern.schedules.add"))

    const list = sql`SELECT s.*,
        (SELECT count(*) FROM schedule_runs r WHERE r.schedule_id = s.id AND r.outcome = 'fired') AS fired,
        (SELECT count(*) FROM schedule_runs r WHERE r.schedule_id = s.id AND r.outcome = 'missed') AS missed,
        (SELECT max(due_ms) FROM schedule_runs r WHERE r.schedule_id = s.id AND r.outcome = 'fired') AS last_fired_ms,
        (SELECT max(due_ms) FROM schedule_runs r WHERE r.schedule_id = s.id AND r.outcome = 'missed') AS last_missed_ms
      FROM schedules s ORDER BY s.id`.pipe(
      Effect.flatMap(decodeWithRuns),
      Effect.mapError(failed("read")),
      Effect.withSpan("kern.schedules.list")
    )

    const get = (id: number) =>
      sql`SELECT * FROM schedules WHERE id = ${id}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.mapError(failed("read"))
      )

    /** Deletes a schedule and its runs; false when there was none by that id. */
    const remove = (id: number) =>
      Effect.gen(function*() {
        const rows = yield* sql`DELETE FROM schedules WHERE id = ${id} RETURNING id`
        yield* changed
        return rows.length > 0
      }).pipe(Effect.mapError(failed("write")), Effect.withSpan("kern.schedules.remove", { attributes: { id } }))

    /** The schedules with a run due at `nowMs`. */
    const due = (nowMs: number) =>
      sql`SELECT * FROM schedules WHERE next_due_ms IS NOT NULL AND next_due_ms <= ${nowMs} ORDER BY next_due_ms, id`.pipe(
        Effect.flatMap(decodeRows),
        Effect.mapError(failed("read")),
        Effect.withSpan("kern.schedules.due")
      )

    /** When the next run of any schedule is due (one indexed read: what the Scheduler polls). */
    const earliest = sql`SELECT min(next_due_ms) AS earliest FROM schedules WHERE next_due_ms IS NOT NULL`.pipe(
      Effect.flatMap(decodeEarliest),
      Effect.map((rows) => Option.fromNullable(rows[0]?.earliest)),
      Effect.mapError(failed("read"))
    )

    /**
     * Records what became of a schedule's due runs and moves it to its next due time, in one transaction; a run
     * already recorded stays as it was. Only while the schedule is still due from `fromMs` (removed or moved by
     * someone else meanwhile: nothing changes).
     */
    const settle = (id: number, fromMs: number, runs: { readonly fired: ReadonlyArray<number>; readonly missed: ReadonlyArray<number> }, next: number | null) =>
      Effect.gen(function*() {
        const atMs = yield* Clock.currentTimeMillis
        const still = yield* sql`SELECT id FROM schedules WHERE id = ${id} AND next_due_ms = ${fromMs}`
        if (still.length === 0) return
        for (const [outcome, dues] of [["fired", runs.fired], ["missed", runs.missed]] as const) {
          for (const dueMs of dues) {
            yield* sql`INSERT INTO schedule_runs ${sql.insert({ scheduleId: id, dueMs, outcome, atMs })} ON CONFLICT DO NOTHING`
          }
        }
        yield* sql`UPDATE schedules SET next_due_ms = ${next} WHERE id = ${id}`
      }).pipe(transaction(sql), Effect.mapError(failed("write")), Effect.withSpan("kern.schedules.settle", { attributes: { id } }))

    /** Every schedule's missed runs in one line's worth, for `kern status`. */
    const summary = sql`SELECT
        (SELECT count(*) FROM schedules) AS schedules,
        (SELECT count(*) FROM schedules WHERE next_due_ms IS NOT NULL) AS active,
        (SELECT count(*) FROM schedule_runs WHERE outcome = 'missed') AS missed,
        (SELECT max(due_ms) FROM schedule_runs WHERE outcome = 'missed') AS last_missed_ms`.pipe(
      Effect.flatMap(decodeSummary),
      Effect.map((rows) => rows[0] ?? new MissedSummary({ schedules: 0, active: 0, missed: 0, lastMissedMs: null })),
      Effect.mapError(failed("read"))
    )

    /** When the running agent's heartbeat is next due (HeartbeatLog keeps it; none while no agent runs), for listings. */
    const heartbeatNext = sql`SELECT next_at_ms FROM heartbeat_state WHERE id = 1`.pipe(
      Effect.flatMap(decodeHeartbeatNext),
      Effect.map((rows) => rows[0]?.nextAtMs ?? null),
      Effect.mapError(failed("read"))
    )

    /** Waits until this process adds or removes a schedule (the Scheduler's wake-up; one waiter). */
    const awaitChange = Queue.take(changes)

    return { add, list, get, remove, due, earliest, settle, summary, heartbeatNext, awaitChange } as const
  })
}) {}
