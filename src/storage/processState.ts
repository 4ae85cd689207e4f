import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"

/**
 * What the system says of a process, by pid: whether it still runs, and (where /proc tells it) its name, state and
 * start time. One door for every "is that process still there" question (the folder lock, `kern stop`, the reaper of
 * a bash call's processes): a zombie, dead but not yet reaped by its parent, answers `kill -0` like a live process;
 * here it counts as gone. The reads are synchronous: one small file, on paths that poll.
 */

/** The fields of `/proc/<pid>/stat` kern uses. */
export interface ProcessStat {
  /** The executable's name as the kernel keeps it (`comm`, at most 15 characters). */
  readonly command: string
  /** `R` running, `S` sleeping, `Z` zombie, `X` dead, … */
  readonly state: string
  readonly pgrp: number
  /** Start time in clock ticks since boot (field 22), as written: compared, never computed with. */
  readonly start: string | undefined
}

/** `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses, so it ends at the last `)`. */
export const parseProcessStat = (stat: string): ProcessStat | undefined => {
  const open = stat.indexOf("(")
  const close = stat.lastIndexOf(")")
  if (open < 0 || close < open) return undefined
  const fields = stat.slice(close + 2).split(" ")
  const start = fields[19]
  return {
    command: stat.slice(open + 1, close),
    state: fields[0] ?? "",
    pgrp: Number(fields[2]),
    start: start !== undefined && /^\d+$/.test(start) ? start : undefined
  }
}

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/** The process's stat; undefined when it is gone or /proc does not tell (not Linux). */
export const readProcessStat = (pid: number): ProcessStat | undefined => {
  try {
    return parseProcessStat(NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    // ENOENT (gone), ESRCH (gone while read), or no /proc at all: either way nothing to tell.
    return undefined
  }
}

/** Dead, waiting for its parent to reap it (`Z`), or being reaped (`X`). */
export const isDeadState = (state: string): boolean => state === "Z" || state === "X"

/**
 * Whether the pid names a running process: it exists (`kill -0`; EPERM means another user's, still there) and,
 * where /proc tells, it is not a zombie.
 */
export const processRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    if (errnoOf(error) !== "EPERM") return false
  }
  const stat = readProcessStat(pid)
  return stat === undefined || !isDeadState(stat.state)
}

/**
 * Whether a lock's holder still runs: its pid names a running process (a zombie is gone) that started when the lock
 * says. A lock from another host cannot be checked from here and counts as live.
 */
export const holderRunning = (holder: { readonly pid: number; readonly host: string; readonly processStart?: string | undefined }): boolean => {
  if (holder.host !== NodeOs.hostname()) return true
  if (!processRunning(holder.pid)) return false
  if (holder.processStart === undefined) return true
  const start = readProcessStat(holder.pid)?.start
  return start === undefined || start === holder.processStart
}
