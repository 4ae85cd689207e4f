import { Either } from "effect"
import { nextCronDue, parseCron } from "./dueTimes.js"
import { defaultGraceMs, type MisfirePolicy, type ScheduleKind } from "./ScheduleRow.js"
import { parseWhen, parseZone } from "./whenText.js"

/** What someone asks for (the tool's, the command line's and the HTTP route's arguments alike). */
export interface ScheduleRequest {
  readonly at?: string | undefined
  readonly cron?: string | undefined
  readonly timezone?: string | undefined
  readonly prompt: string
  readonly misfire?: MisfirePolicy | undefined
  readonly graceMinutes?: number | undefined
}

/** A checked request: when it is first due, in which zone, with which misfire policy. */
export interface ScheduleDraft {
  readonly kind: ScheduleKind
  readonly cron: string | null
  readonly atMs: number | null
  readonly timezone: string
  readonly prompt: string
  readonly misfire: MisfirePolicy
  readonly graceMs: number
  readonly nextDueMs: number
}

/** The longest prompt a schedule keeps. */
export const maxPromptChars = 20_000

/**
 * A request checked at `nowMs`: exactly one of `at` and `cron`, a zone that exists (the agent's `timezone`, else UTC,
 * unless it names one), a prompt; a one-shot defaults to misfire `once`, a cron to `skip`.
 */
export const draftSchedule = (request: ScheduleRequest, nowMs: number, agentZone: string | undefined): Either.Either<ScheduleDraft, string> =>
  Either.gen(function*() {
    const prompt = request.prompt.trim()
    if (prompt === "") return yield* Either.left("prompt is empty: say what the agent is to do when the schedule fires")
    if (prompt.length > maxPromptChars) return yield* Either.left(`prompt is longer than ${maxPromptChars} characters`)
    const timezone = request.timezone?.trim() || agentZone || "UTC"
    const zone = yield* parseZone(timezone)
    const grace = request.graceMinutes
    if (grace !== undefined && (!Number.isInteger(grace) || grace < 1 || grace > 366 * 24 * 60)) {
      return yield* Either.left(`graceMinutes must be a whole number of minutes from 1 to ${366 * 24 * 60}, not ${grace}`)
    }
    const graceMs = grace === undefined ? defaultGraceMs : grace * 60_000
    const at = request.at?.trim() ?? ""
    const cron = request.cron?.trim() ?? ""
    if ((at === "") === (cron === "")) {
      return yield* Either.left("give exactly one of at (a one-shot: \"in 3 days at 09:00\", an ISO time) and cron (\"0 9 * * 1-5\")")
    }
    if (at !== "") {
      const atMs = yield* parseWhen(at, nowMs, zone)
      return { kind: "at", cron: null, atMs, timezone, prompt, misfire: request.misfire ?? "once", graceMs, nextDueMs: atMs } as const
    }
    const parsed = yield* parseCron(cron, timezone)
    return {
      kind: "cron",
      cron,
      atMs: null,
      timezone,
      prompt,
      misfire: request.misfire ?? "skip",
      graceMs,
      nextDueMs: nextCronDue(parsed, nowMs)
    } as const
  })
