import { FileSystem } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import * as NodePath from "node:path"
import type { AgentPaths } from "../config/paths.js"
import { orIfMissing } from "../storage/missingFile.js"

/** The background agent's files: its pid (src/storage/PidFile.ts) and its log (rotated), under `.kern/`. */
export const daemonFiles = (paths: AgentPaths) => ({
  pidFile: paths.pidFile,
  logFile: NodePath.join(paths.logsDir, "kern.log")
})

/** The log is rotated past this size: kern.log → kern.log.1 → … → kern.log.3. */
export const logMaxBytes = 10 * 1024 * 1024
export const logKeep = 3

/**
 * Copy-and-truncate rotation: the running agent writes its log through a descriptor opened for appending, which a
 * rename would leave pointing at the old file; truncating in place keeps it writing to kern.log.
 */
export const rotateLog = (logFile: string, maxBytes = logMaxBytes, keep = logKeep) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const size = yield* fs.stat(logFile).pipe(Effect.map((info) => Number(info.size)), orIfMissing(() => 0))
    if (size <= maxBytes) return false
    for (let n = keep - 1; n >= 1; n--) {
      const from = `${logFile}.${n}`
      if (yield* fs.exists(from)) yield* fs.rename(from, `${logFile}.${n + 1}`)
    }
    yield* fs.copyFile(logFile, `${logFile}.1`)
    yield* fs.truncate(logFile, 0)
    return true
  }).pipe(Effect.withSpan("kern.daemon.rotateLog"))

/** Bytes of the log now: where a start's own lines begin. */
export const logSize = (logFile: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.stat(logFile).pipe(Effect.map((info) => Number(info.size)), orIfMissing(() => 0)))

/** The log from `offset` on, as text. */
export const logFrom = (logFile: string, offset: number) =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const size = yield* logSize(logFile)
    if (size <= offset) return ""
    const file = yield* fs.open(logFile, { flag: "r" })
    yield* file.seek(offset, "start")
    const bytes = yield* file.readAlloc(size - offset)
    return Option.match(bytes, { onNone: () => "", onSome: (b) => Buffer.from(b).toString("utf8") })
  }))

export const Level = Schema.Literal("debug", "info", "warn", "error")
export type Level = typeof Level.Type

const rank: Record<string, number> = { DEBUG: 0, TRACE: 0, INFO: 1, WARN: 2, WARNING: 2, ERROR: 3, FATAL: 3 }
const levelPattern = /^\S+ (TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL) /

/**
 * The lines at or above a level. A log line starts `<ISO time> <LEVEL> `; lines without one (a stack trace, output
 * from before the logger) belong to the line above.
 */
export const filterLevel = (lines: ReadonlyArray<string>, level: Level | undefined, carried = 1): { readonly kept: ReadonlyArray<string>; readonly carried: number } => {
  if (level === undefined) return { kept: lines, carried }
  const min = rank[level.toUpperCase()] ?? 0
  let current = carried
  const kept: Array<string> = []
  for (const line of lines) {
    const match = levelPattern.exec(line)
    if (match?.[1] !== undefined) current = rank[match[1]] ?? 1
    if (current >= min) kept.push(line)
  }
  return { kept, carried: current }
}
