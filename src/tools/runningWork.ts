import { Schema } from "effect"
import { isoAt } from "../session/envelope.js"
import type { JobRow } from "./JobStore.js"
import { formatDuration } from "./jobText.js"
import type { SubAgent } from "./subagents/SubAgentStore.js"

/** A command or task as status shows it: on one line, at most this many characters. */
const clipAt = 60

/** One line of at most `clipAt` characters: whitespace runs (newlines included) become one space, the rest is cut with `…`. */
export const clipped = (text: string): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > clipAt ? `${line.slice(0, clipAt - 1)}…` : line
}

export const RunningJob = Schema.Struct({
  id: Schema.Number,
  /** Clipped to one line of 60 characters (`kern jobs` and the jobs tool show it whole). */
  command: Schema.String,
  /** ISO time it started. */
  startedAt: Schema.String,
  ageMs: Schema.Number
})

export const RunningSubAgent = Schema.Struct({
  id: Schema.Number,
  /** Clipped to one line of 60 characters. */
  task: Schema.String,
  /** 1: spawned by a turn; 2: by a sub-agent; …. */
  depth: Schema.Number,
  startedAt: Schema.String,
  ageMs: Schema.Number
})

/** The background jobs running now: what `kern status` and GET /status show. */
export const RunningJobs = Schema.Struct({ count: Schema.Number, running: Schema.Array(RunningJob) })
export type RunningJobs = typeof RunningJobs.Type

/** The sub-agents running now: what `kern status` and GET /status show. */
export const RunningSubAgents = Schema.Struct({ count: Schema.Number, running: Schema.Array(RunningSubAgent) })
export type RunningSubAgents = typeof RunningSubAgents.Type

export const runningJobsOf = (rows: ReadonlyArray<JobRow>, now: number): RunningJobs => {
  const running = rows.filter((row) => row.state === "running")
  return {
    count: running.length,
    running: running.map((row) => ({
      id: row.id,
      command: clipped(row.command),
      startedAt: isoAt(row.startedAtMs),
      ageMs: Math.max(0, now - row.startedAtMs)
    }))
  }
}

export const runningSubAgentsOf = (rows: ReadonlyArray<SubAgent>, now: number): RunningSubAgents => {
  const running = rows.filter((row) => row.state === "running")
  return {
    count: running.length,
    running: running.map((row) => ({
      id: row.id,
      task: clipped(row.task),
      depth: row.depth,
      startedAt: isoAt(row.createdAtMs),
      ageMs: Math.max(0, now - row.createdAtMs)
    }))
  }
}

/** `kern status`'s lines for them (the caller makes the clipped text safe for a terminal). */
export const runningJobLines = (jobs: RunningJobs): ReadonlyArray<string> =>
  jobs.count === 0
    ? []
    : [
      `jobs:      ${jobs.count} running (kern jobs lists them)`,
      ...jobs.running.map((job) => `  ${job.id} ${formatDuration(job.ageMs)} ${job.command}`)
    ]

export const runningSubAgentLines = (subagents: RunningSubAgents): ReadonlyArray<string> =>
  subagents.count === 0
    ? []
    : [
      `subagents: ${subagents.count} running`,
      ...subagents.running.map((sub) =>
        `  ${sub.id} ${formatDuration(sub.ageMs)}${sub.depth > 1 ? ` (depth ${sub.depth})` : ""} ${sub.task}`
      )
    ]
