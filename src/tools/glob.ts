import { Effect, Either, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { toolFailure } from "../kernel/ToolFailure.js"
import { compileGlob } from "./globPattern.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { walkFiles } from "./walk.js"
import { Workspace } from "./Workspace.js"

export const GlobArgs = Schema.Struct({
  pattern: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "Glob such as \"**/*.md\" or \"src/**/*.{ts,tsx}\"; a pattern without / matches file names at any depth"
  }),
  path: Schema.optional(Schema.String.annotations({ description: "Folder to search (default: the agent folder)" }))
})
export type GlobArgs = typeof GlobArgs.Type

export const globTool: ToolMetadata = {
  toolId: "glob",
  name: "Glob",
  description: "Find files by name pattern, newest first. Honours .gitignore; skips node_modules and .git.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  timeoutMs: 30_000,
  scope: "read"
}

export interface GlobOutput {
  readonly files: ReadonlyArray<string>
  readonly total: number
  readonly truncated: boolean
  readonly text: string
}

export const globMaxResults = 500
const maxScannedFiles = 200_000

/** Files below a folder whose path matches the pattern, newest first, at most 500. */
export const glob = Effect.fn("kern.tools.glob")(function*(args: GlobArgs) {
  const workspace = yield* Workspace
  const base = yield* workspace.resolve(args.path ?? ".")
  const isDirectory = yield* Effect.sync(() => NodeFs.statSync(base.path, { throwIfNoEntry: false })?.isDirectory())
  if (isDirectory !== true) return yield* toolFailure("NOT_FOUND", `${base.display} is not a folder`)
  const compiled = compileGlob(args.pattern)
  if (Either.isLeft(compiled)) return yield* toolFailure("VALIDATION_ERROR", `pattern is not a usable glob: ${compiled.left}`)
  const matcher = compiled.right
  const walked = yield* walkFiles(base.path, { root: workspace.root, maxFiles: maxScannedFiles })
  const matched = walked.files.filter(matcher.matches)
  const dated = yield* Effect.sync(() =>
    matched.map((relative) => ({
      relative,
      mtime: NodeFs.statSync(NodePath.join(base.path, relative), { throwIfNoEntry: false })?.mtimeMs ?? 0
    }))
  )
  dated.sort((a, b) => b.mtime - a.mtime || a.relative.localeCompare(b.relative))
  const shown = dated.slice(0, globMaxResults).map((entry) =>
    workspace.display(NodePath.join(base.path, entry.relative))
  )
  const notes = [
    ...(dated.length > globMaxResults
      ? [`[${dated.length - globMaxResults} more files not shown; use a narrower pattern or path]`]
      : []),
    ...(walked.truncated ? [`[stopped after scanning ${maxScannedFiles} files; search a smaller folder]`] : [])
  ]
  const text = shown.length === 0
    ? `no files match ${args.pattern} in ${base.display}`
    : [...shown, ...notes].join("\n")
  return { files: shown, total: dated.length, truncated: dated.length > globMaxResults || walked.truncated, text } satisfies GlobOutput
})
