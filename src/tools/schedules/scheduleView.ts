import { localIso } from "../../session/envelope.js"
import type { ScheduleWithRuns } from "./ScheduleStore.js"

/** A schedule as listings show it (the tool, `kern schedule list --json`, GET /schedules): times in its own zone. */
export const scheduleView = (s: ScheduleWithRuns) => ({
  id: s.id,
  kind: s.kind,
  when: s.kind === "cron" ? s.cron ?? "" : s.atMs === null ? "" : localIso(s.atMs, s.timezone),
  timezone: s.timezone,
  prompt: s.prompt,
  misfire: s.misfire,
  deliverTo: s.deliverTo,
  createdBy: s.createdBy,
  next: s.nextDueMs === null ? null : localIso(s.nextDueMs, s.timezone),
  nextDueMs: s.nextDueMs,
  fired: s.fired,
  missed: s.missed,
  lastFired: s.lastFiredMs === null ? null : localIso(s.lastFiredMs, s.timezone),
  lastMissed: s.lastMissedMs === null ? null : localIso(s.lastMissedMs, s.timezone)
})
export type ScheduleView = ReturnType<typeof scheduleView>
