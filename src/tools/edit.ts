import type { FileSystem, Path } from "@effect/platform"
import { Effect, Schema } from "effect"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { atomicWrite } from "./atomicWrite.js"
import { closestLine, countOccurrences } from "./editMatching.js"
import { fileFailure } from "./failures.js"
import { ensureReadAndUnchanged } from "./readBeforeWrite.js"
import { ReadTracker, snapshotOf } from "./ReadTracker.js"
import { isBinary } from "./textFile.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { ToolSession } from "./ToolSession.js"
import { Workspace } from "./Workspace.js"
import { currentBytes, writeFailure } from "./write.js"
import { WriteLock } from "./WriteLock.js"

export const EditArgs = Schema.Struct({
  path: Schema.String.annotations({ description: "The file to change" }),
  oldString: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "Exact text to replace, whitespace included; include enough context to make it unique"
  }),
  newString: Schema.String.annotations({ description: "The replacement text" }),
  replaceAll: Schema.optionalWith(
    Schema.Boolean.annotations({ description: "Replace every occurrence instead of exactly one" }),
    { default: () => false }
  )
})
export type EditArgs = typeof EditArgs.Type

export const editTool: ToolMetadata = {
  toolId: "edit",
  name: "Edit",
  description: "Replace an exact string in a file that was read in this session. oldString must occur exactly once " +
    "unless replaceAll is true.",
  safetyClass: "LOCAL_WRITE",
  idempotent: false,
  timeoutMs: 30_000,
  scope: "write"
}

export interface EditOutput {
  readonly path: string
  readonly replacements: number
  readonly text: string
}

/**
 * Exact string replacement, atomic, after the read-before-write check; from reading the file to the rename it
 * holds the file's lock across processes, so concurrent edits apply one after another and none is lost.
 */
export const edit = Effect.fn("kern.tools.edit")(function*(args: EditArgs) {
  const workspace = yield* Workspace
  const lock = yield* WriteLock
  const tracker = yield* ReadTracker
  const { sessionId } = yield* ToolSession
  const file = yield* workspace.resolve(args.path, "write")
  return yield* Effect.gen(function*() {
    const before = yield* currentBytes(file.path, file.display)
    if (before === undefined) return yield* toolFailure("NOT_FOUND", `${file.display} does not exist; create it with write`)
    yield* ensureReadAndUnchanged(sessionId, file, before)
    if (isBinary(before)) return yield* toolFailure("VALIDATION_ERROR", `${file.display} is a binary file; edit works on text`)
    if (args.oldString === args.newString) {
      return yield* toolFailure("VALIDATION_ERROR", "oldString and newString are the same; nothing would change")
    }
    const content = new TextDecoder("utf-8").decode(before)
    const count = countOccurrences(content, args.oldString)
    if (count === 0) {
      const closest = closestLine(content, args.oldString)
      return yield* toolFailure(
        "NOT_FOUND",
        `oldString was not found in ${file.display}` +
          (closest === undefined ? "" : `; the closest line is ${closest.line}: ${JSON.stringify(closest.text)}`) +
          ". Read the file again and copy the text exactly, whitespace included"
      )
    }
    if (count > 1 && !args.replaceAll) {
      return yield* toolFailure(
        "VALIDATION_ERROR",
        `oldString occurs ${count} times in ${file.display}; add surrounding lines to make it unique, or set replaceAll to true`
      )
    }
    const updated = args.replaceAll
      ? content.split(args.oldString).join(args.newString)
      : content.replace(args.oldString, () => args.newString)
    const data = new TextEncoder().encode(updated)
    yield* atomicWrite(file.path, data, snapshotOf(before)).pipe(Effect.mapError(writeFailure(file.display)))
    yield* tracker.record(sessionId, file.path, snapshotOf(data))
    const replacements = args.replaceAll ? count : 1
    return {
      path: file.display,
      replacements,
      text: `Replaced ${replacements} occurrence${replacements === 1 ? "" : "s"} in ${file.display}`
    } satisfies EditOutput
  }).pipe(lock.withFile(file, "edit"), lock.withLock)
})
