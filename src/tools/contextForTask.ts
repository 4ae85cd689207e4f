import { Effect, Either, Schema } from "effect"
import * as NodePath from "node:path"
import { toolFailure } from "../kernel/ToolFailure.js"
import { agentFileReader } from "../storage/agentFiles.js"
import { describeUnknown } from "./failures.js"
import { bundle, scoreFile, taskKeywords } from "./taskContext.js"
import { isBinary, splitLines } from "./textFile.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { walkFiles } from "./walk.js"
import { Workspace } from "./Workspace.js"

export const ContextForTaskArgs = Schema.Struct({
  task: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "What you are about to do, in a sentence" }),
  budgetBytes: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(500, 20_000)).annotations({ description: "Size of the bundle in bytes (default 4000, max 20000)" }),
    { default: () => 4000 }
  )
})
export type ContextForTaskArgs = typeof ContextForTaskArgs.Type

export const contextForTaskTool: ToolMetadata = {
  toolId: "context_for_task",
  name: "ContextForTask",
  description: "Build a small bundle of context for a task: the most relevant files of the agent folder, their " +
    "outlines and matching excerpts, within a byte budget. A good first step before reading files.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  timeoutMs: 30_000,
  scope: "read"
}

export interface ContextForTaskOutput {
  readonly keywords: ReadonlyArray<string>
  readonly files: ReadonlyArray<{ readonly path: string; readonly score: number }>
  readonly bytes: number
  readonly text: string
}

const maxScannedFiles = 5_000
const maxFileBytes = 512 * 1024
const maxRanked = 8

export const contextForTask = Effect.fn("kern.tools.context_for_task")(function*(args: ContextForTaskArgs) {
  const workspace = yield* Workspace
  const keywords = taskKeywords(args.task)
  if (keywords.length === 0) {
    return yield* toolFailure("VALIDATION_ERROR", "the task has no searchable words; describe it with the names and terms involved")
  }
  const readFile = agentFileReader({ roots: workspace.roots, maxBytes: maxFileBytes })
  const walked = yield* walkFiles(workspace.root, { root: workspace.root, maxFiles: maxScannedFiles })
  const scored = yield* Effect.try({
    try: () =>
      walked.files.flatMap((path) => {
        // Through the door: a hard link, a FIFO, a device or a file over the cap is left out (a FIFO without blocking).
        const read = readFile(NodePath.join(workspace.root, path))
        if (Either.isLeft(read) || isBinary(read.right.bytes)) return []
        const bytes = Buffer.from(read.right.bytes)
        const content = bytes.toString("utf8")
        const score = scoreFile(path, content, keywords)
        return score > 0 ? [{ path, score, content }] : []
      }),
    catch: (error) => toolFailure("UNEXPECTED", `could not scan the agent folder: ${describeUnknown(error)}`, true)
  })
  scored.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path))
  const ranked = scored.slice(0, maxRanked).map((file) => ({ path: file.path, score: file.score, lines: splitLines(file.content) }))
  if (ranked.length === 0) {
    const text = `nothing in the agent folder mentions ${keywords.join(", ")}`
    return { keywords, files: [], bytes: Buffer.byteLength(text), text } satisfies ContextForTaskOutput
  }
  const result = bundle(ranked, keywords, args.budgetBytes)
  return {
    keywords,
    files: ranked.filter((file) => result.included.includes(file.path)).map(({ path, score }) => ({ path, score })),
    bytes: Buffer.byteLength(result.text),
    text: result.text
  } satisfies ContextForTaskOutput
})
