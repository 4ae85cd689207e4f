import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Schema } from "effect"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { atomicWrite, type TargetChanged } from "./atomicWrite.js"
import { fileFailure } from "./failures.js"
import { ensureReadAndUnchanged } from "./readBeforeWrite.js"
import { ReadTracker, snapshotOf } from "./ReadTracker.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { ToolSession } from "./ToolSession.js"
import { Workspace } from "./Workspace.js"
import { WriteLock } from "./WriteLock.js"

export const WriteArgs = Schema.Struct({
  path: Schema.String.annotations({ description: "File to create or overwrite; parent folders are created" }),
  content: Schema.String.annotations({ description: "The complete new content of the file" })
})
export type WriteArgs = typeof WriteArgs.Type

export const writeTool: ToolMetadata = {
  toolId: "write",
  name: "Write",
  description: "Create a file or replace its whole content. An existing file must have been read in this session " +
    "(and not changed since); for small changes prefer edit.",
  safetyClass: "LOCAL_WRITE",
  idempotent: true,
  timeoutMs: 30_000,
  scope: "write"
}

export interface WriteOutput {
  readonly path: string
  readonly bytes: number
  readonly created: boolean
  readonly text: string
}

/** Reads a file's current bytes, or undefined when there is none yet. */
export const currentBytes = (path: string, display: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(path).pipe(Effect.mapError(fileFailure(display)))
    if (!exists) return undefined
    const info = yield* fs.stat(path).pipe(Effect.mapError(fileFailure(display)))
    if (info.type !== "File") return yield* toolFailure("VALIDATION_ERROR", `${display} is a ${info.type.toLowerCase()}, not a file`)
    return yield* fs.readFile(path).pipe(Effect.mapError(fileFailure(display)))
  })

/** A failed atomic write as the model should read it: a change under our feet says to read again. */
export const writeFailure = (display: string) => (error: PlatformError | TargetChanged): ToolFailure =>
  error._tag === "TargetChanged"
    ? toolFailure(
      "VALIDATION_ERROR",
      `${display} changed on disk while it was being written; nothing was written. Read it again before changing it`
    )
    : fileFailure(display)(error)

/** Atomically creates or overwrites a file the session has read; records the new content as seen. */
export const write = Effect.fn("kern.tools.write")(function*(args: WriteArgs) {
  const workspace = yield* Workspace
  const lock = yield* WriteLock
  const tracker = yield* ReadTracker
  const { sessionId } = yield* ToolSession
  const file = yield* workspace.resolve(args.path, "write")
  return yield* Effect.gen(function*() {
    const before = yield* currentBytes(file.path, file.display)
    if (before !== undefined) yield* ensureReadAndUnchanged(sessionId, file, before)
    const data = new TextEncoder().encode(args.content)
    yield* atomicWrite(file.path, data, before === undefined ? "absent" : snapshotOf(before)).pipe(
      Effect.mapError(writeFailure(file.display))
    )
    yield* tracker.record(sessionId, file.path, snapshotOf(data))
    const created = before === undefined
    return {
      path: file.display,
      bytes: data.byteLength,
      created,
      text: `${created ? "Created" : "Overwrote"} ${file.display} (${data.byteLength} bytes)`
    } satisfies WriteOutput
  }).pipe(lock.withFile(file, "write"), lock.withLock)
})
