import { Effect, Either, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { toolFailure } from "../kernel/ToolFailure.js"
import { compileGlob } from "./globPattern.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { walkFiles } from "./walk.js"
import { Workspace } from "./Workspace.js"

export const GrepArgs = Schema.Struct({
  pattern: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "JavaScript regular expression searched line by line, e.g. \"TODO|FIXME\" or \"function\\s+load\""
  }),
  path: Schema.optional(Schema.String.annotations({ description: "File or folder to search (default: the agent folder)" })),
  include: Schema.optional(Schema.String.annotations({ description: "Only files whose name matches this glob, e.g. \"*.md\" or \"*.{ts,tsx}\"" }))
})
export type GrepArgs = typeof GrepArgs.Type

export const grepTool: ToolMetadata = {
  toolId: "grep",
  name: "Grep",
  description: "Search file contents with a regular expression; prints file:line:text. Honours .gitignore; skips " +
    "binary files, node_modules and .git.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  timeoutMs: 60_000,
  scope: "read"
}

export interface GrepOutput {
  readonly matches: number
  readonly files: number
  readonly truncated: boolean
  readonly text: string
}

export const grepMaxMatches = 250
const maxLineChars = 300
const maxFileBytes = 10 * 1024 * 1024
const maxScannedFiles = 200_000
const batchSize = 128
const sniffBytes = 8192
const scratchBytes = 1024 * 1024

interface FileHits {
  readonly lines: Array<string>
  readonly count: number
}

/**
 * Reads a text file for searching: most files fit the caller's scratch buffer, which saves an allocation and a
 * stat per file; undefined for unreadable, binary (a NUL byte near the start, as grep decides) or huge files.
 */
const readText = (absolute: string, scratch: Buffer): string | undefined => {
  let fd: number
  try {
    fd = NodeFs.openSync(absolute, "r")
  } catch {
    return undefined
  }
  try {
    const read = NodeFs.readSync(fd, scratch, 0, scratch.byteLength, 0)
    let bytes = scratch.subarray(0, read)
    if (read === scratch.byteLength) {
      if (NodeFs.fstatSync(fd).size > maxFileBytes) return undefined
      bytes = NodeFs.readFileSync(absolute)
    }
    if (bytes.subarray(0, sniffBytes).indexOf(0) >= 0) return undefined
    return bytes.toString("utf8")
  } catch {
    return undefined
  } finally {
    NodeFs.closeSync(fd)
  }
}

/** The matching lines of one file as `file:line:text`; undefined for binary or unreadable files. */
export const searchFile = (
  absolute: string,
  shown: string,
  quick: RegExp,
  line: RegExp,
  budget: number,
  scratch: Buffer
): FileHits | undefined => {
  const content = readText(absolute, scratch)
  if (content === undefined) return undefined
  // One scan of the whole file rules out most files before splitting lines.
  quick.lastIndex = 0
  if (!quick.test(content)) return { lines: [], count: 0 }
  const lines: Array<string> = []
  let count = 0
  let start = 0
  for (let number = 1; start <= content.length; number++) {
    let end = content.indexOf("\n", start)
    if (end < 0) end = content.length
    const text = content.charCodeAt(end - 1) === 13 ? content.slice(start, end - 1) : content.slice(start, end)
    line.lastIndex = 0
    if (line.test(text)) {
      count++
      if (lines.length < budget) {
        lines.push(`${shown}:${number}:${text.length > maxLineChars ? `${text.slice(0, maxLineChars)}…` : text}`)
      }
    }
    if (end === content.length) break
    start = end + 1
  }
  return { lines, count }
}

/** Regex search over a file or a folder tree; at most 250 matching lines are shown. */
export const grep = Effect.fn("kern.tools.grep")(function*(args: GrepArgs) {
  const workspace = yield* Workspace
  const compiled = Either.try(() => ({ quick: new RegExp(args.pattern, "m"), line: new RegExp(args.pattern) }))
  if (Either.isLeft(compiled)) {
    const reason = compiled.left instanceof Error ? compiled.left.message : String(compiled.left)
    return yield* toolFailure("VALIDATION_ERROR", `pattern is not a valid regular expression: ${reason}`)
  }
  const { line, quick } = compiled.right
  const target = yield* workspace.resolve(args.path ?? ".")
  const stat = yield* Effect.sync(() => NodeFs.statSync(target.path, { throwIfNoEntry: false }))
  if (stat === undefined) return yield* toolFailure("NOT_FOUND", `${target.display} does not exist`)
  const include = args.include === undefined ? undefined : compileGlob(args.include)
  const walked = stat.isDirectory()
    ? yield* walkFiles(target.path, { root: workspace.root, maxFiles: maxScannedFiles })
    : { files: [""], truncated: false }
  const files = walked.files.filter((file) => include === undefined || include.matches(file === "" ? NodePath.basename(target.path) : file))
  files.sort()
  const scratch = Buffer.allocUnsafe(scratchBytes)
  const out: Array<string> = []
  let total = 0
  let matchedFiles = 0
  for (let i = 0; i < files.length; i += batchSize) {
    yield* Effect.sync(() => {
      for (const file of files.slice(i, i + batchSize)) {
        const absolute = file === "" ? target.path : NodePath.join(target.path, file)
        const hits = searchFile(absolute, workspace.display(absolute), quick, line, grepMaxMatches - out.length, scratch)
        if (hits === undefined || hits.count === 0) continue
        matchedFiles++
        total += hits.count
        out.push(...hits.lines)
      }
    })
    yield* Effect.yieldNow()
  }
  const truncated = total > out.length || walked.truncated
  const notes = [
    ...(total > out.length ? [`[${total - out.length} more matches not shown; narrow the pattern, path or include]`] : []),
    ...(walked.truncated ? [`[stopped after scanning ${maxScannedFiles} files; search a smaller folder]`] : [])
  ]
  const text = total === 0 ? `no matches for ${args.pattern} in ${target.display}` : [...out, ...notes].join("\n")
  return { matches: total, files: matchedFiles, truncated, text } satisfies GrepOutput
})
