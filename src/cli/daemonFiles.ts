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
