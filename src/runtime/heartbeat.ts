import { DateTime } from "effect"
import type { KnowledgeReport } from "../memory/knowledge.js"

export const heartbeatText = "[heartbeat]"

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))

/**
 * Whether an instant falls in `activeHours` (`"HH:MM-HH:MM"`, validated by the config schema) in the agent's zone.
 * The start is included, the end is not; a start after the end spans midnight; equal ends mean all day.
 */
export const withinActiveHours = (activeHours: string | undefined, epochMs: number, zone: DateTime.TimeZone): boolean => {
  if (activeHours === undefined) return true
  const [start, end] = activeHours.split("-").map(minutesOf) as [number, number]
  const parts = DateTime.toParts(DateTime.unsafeMakeZoned(epochMs, { timeZone: zone }))
  const now = parts.hours * 60 + parts.minutes
  if (start === end) return true
  return start < end ? now >= start && now < end : now >= start || now < end
}

/** The heartbeat message: save today's note, care for the knowledge the report names, tell the operator if needed. */
export const heartbeatPrompt = (today: string, knowledge: KnowledgeReport): string => {
  const lines = [
    `${heartbeatText} Save what matters from the recent conversation to today's note, notes/${today}.md.`
  ]
  if (knowledge.stale.length > 0) {
    lines.push(
      `These knowledge files have not changed for a while; check they are still true and update them: ${
        knowledge.stale.map((s) => `${s.file} (${s.days} days)`).join(", ")
      }.`
    )
  }
  if (knowledge.unindexed.length > 0) {
    lines.push(`KNOWLEDGE.md does not mention these files; add a line for each: ${knowledge.unindexed.join(", ")}.`)
  }
  lines.push(
    "If something needs the operator's attention, say so (and if they are paired on Telegram or Slack, reach them " +
      "there with the message tool); otherwise reply NO_REPLY."
  )
  return lines.join("\n")
}
