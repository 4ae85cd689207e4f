import { Schema } from "effect"

/**
 * What to do with runs that came due while the agent was down: `skip` them (recorded as missed), run `once` for all of
 * them, or run `all` of them that are not older than the grace window (older ones are missed).
 */
export const MisfirePolicy = Schema.Literal("skip", "once", "all")
export type MisfirePolicy = typeof MisfirePolicy.Type

export const ScheduleKind = Schema.Literal("at", "cron")
export type ScheduleKind = typeof ScheduleKind.Type

/** A schedule as kern.db holds it (schedules table). */
export class ScheduleRow extends Schema.Class<ScheduleRow>("ScheduleRow")({
  id: Schema.Number,
  kind: ScheduleKind,
  /** The cron expression of a recurring schedule, read in `timezone`. */
  cron: Schema.NullOr(Schema.String),
  /** The one-shot's due time. */
  atMs: Schema.NullOr(Schema.Number),
  timezone: Schema.String,
  prompt: Schema.String,
  misfire: MisfirePolicy,
  graceMs: Schema.Number,
  /** The paired user (`telegram:42`) whose chat each firing's reply goes to; none: the conversation's own. */
  deliverTo: Schema.NullOr(Schema.String),
  /** Where each firing's turn comes from: the conversation that created it, or the chat it delivers to. */
  originInterface: Schema.String,
  originChannel: Schema.String,
  originUserId: Schema.String,
  /** Who added it, for the listing: `operator`, `telegram:42`, … */
  createdBy: Schema.String,
  createdAtMs: Schema.Number,
  /** When it next fires; none once a one-shot has fired or was missed. */
  nextDueMs: Schema.NullOr(Schema.Number)
}) {}

/** One run of a schedule: fired (its turn was posted) or missed (skipped by its misfire policy). */
export class ScheduleRun extends Schema.Class<ScheduleRun>("ScheduleRun")({
  scheduleId: Schema.Number,
  dueMs: Schema.Number,
  outcome: Schema.Literal("fired", "missed"),
  atMs: Schema.Number
}) {}

/** The followup key of one run: a run posts its turn exactly once (Followups.post). */
export const runKey = (id: number, dueMs: number) => `schedule:${id}:${new Date(dueMs).toISOString()}`

/** The default grace window of misfire `all`: runs older than this when the agent comes back are missed. */
export const defaultGraceMs = 24 * 60 * 60_000

/** A run later than this after its due time counts as missed while down (its misfire policy decides). */
export const lateToleranceMs = 60_000
