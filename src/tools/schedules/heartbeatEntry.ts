import { localIso } from "../../session/envelope.js"

/** The heartbeat's id in schedule listings: no stored schedule has it (theirs start at 1). */
export const heartbeatScheduleId = 0 as const

/** Why `kern schedule rm 0` and the schedule tool do not remove the heartbeat, and what turns it off. */
export const heartbeatNotRemovable =
  "schedule 0 is the heartbeat: it is not removed like a schedule; to turn it off, set heartbeatInterval: 0 in .kern/config.json"

/** What the heartbeat's listing is made from: the config's keys and the due time the running agent keeps. */
export interface HeartbeatConfig {
  readonly heartbeatInterval: number
  readonly activeHours?: string | undefined
  readonly timezone?: string | undefined
}

/**
 * The heartbeat as schedule listings show it (kind `heartbeat`), beside the stored schedules: every heartbeatInterval
 * minutes, within activeHours; its next tick (none while no agent runs). None when heartbeatInterval is 0.
 */
export const heartbeatView = (config: HeartbeatConfig, nextDueMs: number | null) =>
  config.heartbeatInterval === 0 ? undefined : {
    id: heartbeatScheduleId,
    kind: "heartbeat" as const,
    when: `every ${config.heartbeatInterval} min${config.activeHours === undefined ? "" : ` within ${config.activeHours}`}`,
    timezone: config.timezone ?? "UTC",
    prompt: "[heartbeat] save today's note, care for knowledge/ (skipped with no model call when nothing happened)",
    next: nextDueMs === null ? null : localIso(nextDueMs, config.timezone),
    nextDueMs,
    note: "the heartbeat (heartbeatInterval in .kern/config.json; 0 turns it off)"
  }
export type HeartbeatView = NonNullable<ReturnType<typeof heartbeatView>>
