import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { refusePastNote } from "../memory/notes.js"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { atomicWrite, type TargetChanged } from "../storage/atomicWrite.js"
import { orIfAbsent, readAgentFile } from "../storage/agentFiles.js"
import { agentFileFailure, fileFailure } from "./failures.js"
import { readMaxFileBytes } from "./read.js"
import { sameSnapshot, snapshotOf } from "../storage/fileSnapshot.js"
import { ReadTracker } from "./ReadTracker.js"
import { ToolSession } from "./ToolSession.js"
import { type ResolvedPath, Workspace } from "./Workspace.js"
import { WriteLock } from "./WriteLock.js"

/**
 * Refuses to change an existing file unless this session read it and it still holds what was read (size and
 * SHA-256 of the content), so the model never overwrites work it has not seen.
 */
export const ensureReadAndUnchanged = (
  sessionId: string,
  file: ResolvedPath,
  current: Uint8Array
): Effect.Effect<void, ToolFailure, ReadTracker> =>
  Effect.gen(function*() {
    const tracker = yield* ReadTracker
    const seen = yield* tracker.lookup(sessionId, file.path)
    if (seen === undefined) {
      return yield* toolFailure(
        "VALIDATION_ERROR",
        `${file.display} already exists and has not been read in this session; read it first, then write or edit it`
      )
    }
    const now = snapshotOf(current)
    if (!sameSnapshot(now, seen)) {
      return yield* toolFailure(
        "VALIDATION_ERROR",
        `${file.display} changed on disk since you read it (${seen.size} → ${now.size} bytes); read it again before changing it`
      )
    }
  })

/**
 * Reads a file's current bytes through the door (src/storage/agentFiles.ts), or undefined when there is none yet: a
 * hard link (perhaps to .kern/.env), a FIFO or a device is refused, so it is neither shown nor replaced.
 */
export const currentBytes = (file: ResolvedPath) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    return yield* readAgentFile(file.path, workspace.fileOptions(file, readMaxFileBytes)).pipe(
      Effect.map((read): Uint8Array | undefined => read.bytes),
      orIfAbsent(() => undefined),
      Effect.mapError(agentFileFailure)
    )
  })

/** A failed atomic write as the model should read it: a change under our feet says to read again. */
export const writeFailure = (display: string) => (error: PlatformError | TargetChanged): ToolFailure =>
  error._tag === "TargetChanged"
    ? toolFailure(
      "VALIDATION_ERROR",
      `${display} changed on disk while it was being written; nothing was written. Read it again before changing it`
    )
    : fileFailure(display)(error)

/**
 * The frame every file change runs in (write, edit): the path resolved for writing (a previous day's note refused),
 * the file's locks held from reading it to the rename, the read-before-write check on what is there now, then the
 * bytes `change` computes from it written atomically against that snapshot and recorded as what this session has seen.
 */
export const changeFile = <A, R>(
  path: string,
  tool: string,
  change: (file: ResolvedPath, before: Uint8Array | undefined) => Effect.Effect<{ readonly data: Uint8Array; readonly output: A }, ToolFailure, R>
) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const lock = yield* WriteLock
    const tracker = yield* ReadTracker
    const { sessionId } = yield* ToolSession
    const file = yield* workspace.resolve(path, "write")
    yield* refusePastNote(NodePath.relative(workspace.folder, file.path), file.display, workspace.zone)
    return yield* Effect.gen(function*() {
      const before = yield* currentBytes(file)
      if (before !== undefined) yield* ensureReadAndUnchanged(sessionId, file, before)
      const { data, output } = yield* change(file, before)
      yield* atomicWrite(file.path, data, before === undefined ? "absent" : snapshotOf(before)).pipe(
        Effect.mapError(writeFailure(file.display))
      )
      yield* tracker.record(sessionId, file.path, snapshotOf(data))
      return output
    }).pipe(lock.withFile(file, tool), lock.withLock)
  })
