import { Effect, Either, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { toolFailure } from "../kernel/ToolFailure.js"
import { type AgentFileBytes, type AgentFileError, agentFileReader, agentFileScan, isRefusal } from "../storage/agentFiles.js"
import { agentFileFailure } from "./failures.js"
import { compileGlob } from "./globPattern.js"
import { requiredLiterals } from "./regexLiterals.js"
import { compilePattern, lineMatcher } from "./regexWorker.js"
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

/** The most file text sent to the worker at once. */
const batchBytes = 8 * 1024 * 1024

/**
 * Reads a text file for searching through the door (src/storage/agentFiles.ts): a hard link, a FIFO, a device, a
 * link out of the roots or into .kern/ is refused (a FIFO without blocking); undefined for a binary file (a NUL byte
 * near the start, as grep decides) and for one holding none of `literals` (which every match holds one of:
 * regexLiterals.ts), before it is decoded.
 */
const readText = (
  absolute: string,
  readFile: (path: string) => Either.Either<AgentFileBytes, AgentFileError>,
  literals?: ReadonlyArray<Buffer>
) =>
  Either.map(readFile(absolute), ({ bytes }) => {
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const binary = (buffer.byteLength > sniffBytes ? buffer.subarray(0, sniffBytes) : buffer).indexOf(0) >= 0
    if (binary || (literals !== undefined && !literals.some((literal) => buffer.indexOf(literal) >= 0))) return undefined
    return buffer.toString("utf8")
  })

/** `file:line:text` for the first `budget` of the given line numbers (ascending) of `content`. */
const hitLines = (shown: string, content: string, numbers: ReadonlyArray<number>, budget: number): Array<string> => {
  const lines: Array<string> = []
  let next = 0
  let start = 0
  for (let number = 1; start <= content.length && next < numbers.length && lines.length < budget; number++) {
    let end = content.indexOf("\n", start)
    if (end < 0) end = content.length
    if (numbers[next] === number) {
      next++
      const text = content.charCodeAt(end - 1) === 13 ? content.slice(start, end - 1) : content.slice(start, end)
      lines.push(`${shown}:${number}:${text.length > maxLineChars ? `${text.slice(0, maxLineChars)}…` : text}`)
    }
    if (end === content.length) break
    start = end + 1
  }
  return lines
}

const notRegular = (display: string) =>
  toolFailure(
    "VALIDATION_ERROR",
    `${display} is not a regular file or a folder (a FIFO, socket or device); grep reads only regular files`
  )

/**
 * Regex search over a file or a folder tree; at most 250 matching lines are shown. A pattern V8's linear engine
 * cannot run is matched in a worker thread, stopped when the call times out (regexWorker.ts).
 */
export const grep = Effect.fn("kern.tools.grep")(function*(args: GrepArgs) {
  const workspace = yield* Workspace
  const compiled = compilePattern(args.pattern)
  if (Either.isLeft(compiled)) {
    return yield* toolFailure("VALIDATION_ERROR", `pattern is not a valid regular expression: ${compiled.left}`)
  }
  const target = yield* workspace.resolve(args.path ?? ".")
  const stat = yield* Effect.sync(() => NodeFs.statSync(target.path, { throwIfNoEntry: false }))
  if (stat === undefined) return yield* toolFailure("NOT_FOUND", `${target.display} does not exist`)
  if (!stat.isDirectory() && !stat.isFile()) return yield* notRegular(target.display)
  if (!stat.isDirectory()) {
    // One file named: a refusal is the answer, not a silent "no matches".
    const refusal = Either.getLeft(readText(target.path, agentFileReader(workspace.fileOptions(target, maxFileBytes))))
    if (refusal._tag === "Some" && isRefusal(refusal.value)) return yield* agentFileFailure(refusal.value)
  }
  const includeGlob = args.include === undefined ? undefined : compileGlob(args.include)
  if (includeGlob !== undefined && Either.isLeft(includeGlob)) {
    return yield* toolFailure("VALIDATION_ERROR", `include is not a usable glob: ${includeGlob.left}`)
  }
  const include = includeGlob?.right
  const walked = stat.isDirectory()
    ? yield* walkFiles(target.path, { root: workspace.root, maxFiles: maxScannedFiles })
    : { files: [""], truncated: false }
  const files = walked.files.filter((file) => include === undefined || include.matches(file === "" ? NodePath.basename(target.path) : file))
  files.sort()
  const matcher = yield* lineMatcher(compiled.right)
  const literals = requiredLiterals(compiled.right)?.map((literal) => Buffer.from(literal, "latin1"))
  // The walk's paths are `/`-separated and normal: joined without NodePath.join's second normalization.
  const absolutes = files.map((file) =>
    file === "" ? target.path : NodePath.sep === "/" ? `${target.path}/${file}` : NodePath.join(target.path, file)
  )
  const readFile = yield* agentFileScan({ ...workspace.fileOptions(target, maxFileBytes), display: undefined }, { paths: absolutes })
  const refused: Array<string> = []
  const out: Array<string> = []
  let total = 0
  let matchedFiles = 0
  let next = 0
  while (next < files.length) {
    const batch = yield* Effect.sync(() => {
      const texts: Array<{ readonly absolute: string; readonly content: string }> = []
      let bytes = 0
      while (next < files.length && texts.length < batchSize && bytes < batchBytes) {
        const absolute = absolutes[next++]!
        const read = readText(absolute, readFile, literals)
        if (Either.isLeft(read)) {
          // Missing (removed meanwhile) or unreadable files are skipped as grep -r does; a refused one is named.
          if (isRefusal(read.left)) refused.push(read.left.path)
          continue
        }
        const content = read.right
        if (content === undefined) continue
        texts.push({ absolute, content })
        bytes += content.length
      }
      return texts
    })
    const hits = yield* matcher.matchLines(batch.map((text) => text.content))
    batch.forEach(({ absolute, content }, index) => {
      const numbers = hits[index] ?? []
      if (numbers.length === 0) return
      matchedFiles++
      total += numbers.length
      if (out.length < grepMaxMatches) out.push(...hitLines(workspace.display(absolute), content, numbers, grepMaxMatches - out.length))
    })
    yield* Effect.yieldNow()
  }
  const truncated = total > out.length || walked.truncated
  const notes = [
    ...(total > out.length ? [`[${total - out.length} more matches not shown; narrow the pattern, path or include]`] : []),
    ...(walked.truncated ? [`[stopped after scanning ${maxScannedFiles} files; search a smaller folder]`] : []),
    ...(refused.length > 0 ? [`[not searched: ${refused.slice(0, 5).join(", ")}${refused.length > 5 ? ` and ${refused.length - 5} more` : ""} (links, FIFOs, devices or files over 10 MB)]`] : [])
  ]
  const text = (total === 0 ? [`no matches for ${args.pattern} in ${target.display}`, ...notes] : [...out, ...notes]).join("\n")
  return { matches: total, files: matchedFiles, truncated, text } satisfies GrepOutput
}, Effect.scoped)
