import { Effect, Schema } from "effect"
import { changeFile } from "./readBeforeWrite.js"
import type { ToolMetadata } from "./toolMetadata.js"

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

/** Atomically creates or overwrites a file the session has read; records the new content as seen. */
export const write = Effect.fn("kern.tools.write")(function*(args: WriteArgs) {
  return yield* changeFile(args.path, "write", (file, before) => {
    const data = new TextEncoder().encode(args.content)
    const created = before === undefined
    return Effect.succeed({
      data,
      output: {
        path: file.display,
        bytes: data.byteLength,
        created,
        text: `${created ? "Created" : "Overwrote"} ${file.display} (${data.byteLength} bytes)`
      } satisfies WriteOutput
    })
  })
})
