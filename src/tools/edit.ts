import { Effect, Schema } from "effect"
import { toolFailure } from "../kernel/ToolFailure.js"
import { closestLine, countOccurrences } from "./editMatching.js"
import { changeFile } from "./readBeforeWrite.js"
import { isBinary } from "./textFile.js"
import type { ToolMetadata } from "./toolMetadata.js"

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
  return yield* changeFile(args.path, "edit", (file, before) => Effect.gen(function*() {
    if (before === undefined) return yield* toolFailure("NOT_FOUND", `${file.display} does not exist; create it with write`)
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
    const replacements = args.replaceAll ? count : 1
    return {
      data: new TextEncoder().encode(updated),
      output: {
        path: file.display,
        replacements,
        text: `Replaced ${replacements} occurrence${replacements === 1 ? "" : "s"} in ${file.display}`
      } satisfies EditOutput
    }
  }))
})
