import { Effect, Schema } from "effect"
import { toolFailure } from "../kernel/ToolFailure.js"
import { readAgentFile } from "../storage/agentFiles.js"
import { agentFileFailure } from "./failures.js"
import { formatOutline, outlineOf } from "./outline.js"
import { readMaxFileBytes } from "./read.js"
import { formatBytes, isBinary, splitLines } from "./textFile.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { Workspace } from "./Workspace.js"
import { counted } from "../config/counted.js"

export const SummarizeFileStructureArgs = Schema.Struct({
  path: Schema.String.annotations({ description: "The source or Markdown file to outline" })
})
export type SummarizeFileStructureArgs = typeof SummarizeFileStructureArgs.Type

export const summarizeFileStructureTool: ToolMetadata = {
  toolId: "summarize_file_structure",
  name: "SummarizeFileStructure",
  description: "A compact outline of one file (functions, classes, exports, headings, defs with line numbers): " +
    "use it on large files before reading ranges.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  timeoutMs: 10_000,
  scope: "read"
}

export interface SummarizeFileStructureOutput {
  readonly path: string
  readonly lines: number
  readonly bytes: number
  readonly symbols: number
  readonly text: string
}

const maxSymbols = 300

export const summarizeFileStructure = Effect.fn("kern.tools.summarize_file_structure")(function*(args: SummarizeFileStructureArgs) {
  const workspace = yield* Workspace
  const file = yield* workspace.resolve(args.path)
  const { bytes } = yield* readAgentFile(file.path, workspace.fileOptions(file, readMaxFileBytes)).pipe(
    Effect.mapError((error) =>
      error.reason === "too-large" ? toolFailure("VALIDATION_ERROR", `${file.display} is too large to outline`) : agentFileFailure(error)
    )
  )
  if (isBinary(bytes)) return yield* toolFailure("VALIDATION_ERROR", `${file.display} is a binary file`)
  const lines = splitLines(new TextDecoder("utf-8").decode(bytes))
  const entries = outlineOf(file.path, lines)
  const header = `${file.display}: ${counted(lines.length, "line")}, ${formatBytes(bytes.byteLength)}`
  const body = entries === undefined
    ? "no outline for this file type; read it with mode \"preview\""
    : entries.length === 0
    ? "no symbols found"
    : formatOutline(entries.slice(0, maxSymbols)) +
      (entries.length > maxSymbols ? `\n[${entries.length - maxSymbols} more symbols not shown]` : "")
  return {
    path: file.display,
    lines: lines.length,
    bytes: bytes.byteLength,
    symbols: entries?.length ?? 0,
    text: `${header}\n${body}`
  } satisfies SummarizeFileStructureOutput
})
