import { Cron, Either } from "effect"
import type { MisfirePolicy } from "./ScheduleRow.js"

/** The most missed runs a catch-up names one by one (an every-minute cron down for a month would be 43,200). */
export const maxNamedMisses = 100

/** The runs counted one by one before the rest of a long downtime is counted by their spacing. */
const maxWalk = 2_000

/** A cron expression in a zone, or why it cannot be read. */
export const parseCron = (expression: string, timezone: string): Either.Either<Cron.Cron, string> =>
  Either.mapLeft(Cron.parse(expression.trim(), timezone), (error) => `cron ${JSON.stringify(expression)}: ${error.message}`)

/** The first run of `cron` strictly after `afterMs`. */
export const nextCronDue = (cron: Cron.Cron, afterMs: number): number => Cron.next(cron, new Date(afterMs)).getTime()

/** What a schedule does now: the runs to fire (late ones flagged), the ones it missed, and when it is next due. */
export interface CatchUp {
  readonly fire: ReadonlyArray<{ readonly dueMs: number; readonly late: boolean }>
  readonly missed: ReadonlyArray<number>
  /** How many runs were missed in all (`missed` names the latest `maxNamedMisses`; past 2,000, counted by spacing). */
  readonly missedCount: number
  readonly next: number | null
}

export interface DueSchedule {
  readonly cron: Cron.Cron | undefined
  readonly nextDueMs: number
  readonly misfire: MisfirePolicy
  readonly graceMs: number
}

/**
 * The runs of a schedule that are due at `nowMs`, from its next due time on: the latest is on time when it is no more
 * than `toleranceMs` late; every earlier one, and a latest one later than that, came due while the agent was down and
 * its misfire policy decides: `skip` misses them, `once` fires the latest of them (unless an on-time run fires now),
 * `all` fires those within the grace window. A one-shot has one run; a cron's next due time is after `nowMs`.
 */
export const catchUp = (schedule: DueSchedule, nowMs: number, toleranceMs: number): CatchUp => {
  const slots: Array<number> = []
  let count = 0
  let slot: number | null = schedule.nextDueMs
  const cron = schedule.cron
  while (slot !== null && slot <= nowMs) {
    count++
    slots.push(slot)
    if (slots.length > maxNamedMisses + 1) slots.shift()
    slot = cron === undefined ? null : nextCronDue(cron, slot)
    // Long down under a frequent cron: the runs between are counted at their average spacing, not one by one
    // (Cron.next takes about a tenth of a millisecond), and the latest ones (all within the grace window) are named.
    if (cron !== undefined && slot !== null && count === maxWalk && slot <= nowMs) {
      const spacing = (slot - schedule.nextDueMs) / count
      const window = Math.max(schedule.misfire === "all" ? schedule.graceMs : 0, (maxNamedMisses + 1) * spacing)
      const resume = nextCronDue(cron, Math.max(slot, nowMs - window) - 1)
      count += Math.max(0, Math.round((resume - slot) / spacing))
      slot = resume
      slots.length = 0
    }
  }
  const next = schedule.cron === undefined ? null : slot
  const last = slots.at(-1)
  if (last === undefined) return { fire: [], missed: [], missedCount: 0, next: schedule.nextDueMs }
  const onTime = nowMs - last <= toleranceMs ? last : undefined
  const late = onTime === undefined ? slots : slots.slice(0, -1)
  const lateCount = onTime === undefined ? count : count - 1
  const fire: Array<{ dueMs: number; late: boolean }> = []
  let missed: Array<number> = []
  switch (schedule.misfire) {
    case "skip":
      missed = late
      break
    case "once": {
      const latest = late.at(-1)
      if (onTime === undefined && latest !== undefined) {
        fire.push({ dueMs: latest, late: true })
        missed = late.slice(0, -1)
      } else missed = late
      break
    }
    case "all":
      for (const due of late) {
        if (nowMs - due <= schedule.graceMs) fire.push({ dueMs: due, late: true })
        else missed.push(due)
      }
      break
  }
  if (onTime !== undefined) fire.push({ dueMs: onTime, late: false })
  const missedCount = lateCount - fire.filter((f) => f.late).length
  return { fire, missed: missed.slice(-maxNamedMisses), missedCount, next }
}
