import { Effect } from "effect"
import ignore, { type Ignore } from "ignore"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { describeUnknown } from "./failures.js"

/**
 * Folders never searched, whatever .gitignore says, compared without case: `.kern` holds secrets and the database
 * (the file tools refuse it), `.git` and node_modules are noise.
 */
export const alwaysSkipped: ReadonlySet<string> = new Set(["node_modules", ".git", ".kern"])

interface Rules {
  /** For a .gitignore above the base: the way down from its folder to the base (`a/b`). */
  readonly toBase: string
  /** For a .gitignore at or below the base: its folder relative to the base (`""` for the base itself). */
  readonly fromBase: string
  readonly rules: Ignore
}

export interface WalkOptions {
  /** Where .gitignore files start to apply (the agent folder); ancestors of the base up to it are honoured. */
  readonly root: string
  /** Stop after this many files (the result says it stopped). */
  readonly maxFiles: number
}

export interface WalkResult {
  /** Paths relative to the base, `/`-separated. */
  readonly files: Array<string>
  readonly truncated: boolean
}

const isMissing = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && (error.code === "ENOENT" || error.code === "ENOTDIR")

/** A folder's .gitignore rules; none when it has none. One that cannot be read is skipped with a warning naming it. */
const readRules = (dir: string, toBase: string, fromBase: string): Effect.Effect<Rules | undefined> => {
  const file = NodePath.join(dir, ".gitignore")
  return Effect.try({ try: () => NodeFs.readFileSync(file, "utf8"), catch: (error) => error }).pipe(
    Effect.map((text): Rules | undefined => ({ toBase, fromBase, rules: ignore().add(text) })),
    Effect.catchAll((error) =>
      isMissing(error)
        ? Effect.succeed(undefined)
        : Effect.as(Effect.logWarning(`kern: ${file} could not be read and is not applied: ${describeUnknown(error)}`), undefined)
    )
  )
}

const ignoredBy = (stack: ReadonlyArray<Rules>, relative: string, directory: boolean): boolean => {
  for (const { fromBase, rules, toBase } of stack) {
    const local = toBase !== "" ? `${toBase}/${relative}` : fromBase === "" ? relative : relative.slice(fromBase.length + 1)
    if (rules.ignores(directory ? `${local}/` : local)) return true
  }
  return false
}

/**
 * Every regular file below `base` (symlinks are not followed), skipping node_modules, .git, .kern and what .gitignore
 * files (in the base, below it, and in its ancestors up to the root) exclude. Synchronous per folder: one
 * readdir call per folder is faster than the async machinery, and the fiber yields between folders.
 */
export const walkFiles = (base: string, options: WalkOptions): Effect.Effect<WalkResult, ToolFailure> =>
  Effect.gen(function*() {
    const ancestors: Array<Rules> = []
    const fromRoot = NodePath.relative(options.root, base)
    if (fromRoot !== "" && !fromRoot.startsWith("..") && !NodePath.isAbsolute(fromRoot)) {
      const parts = fromRoot.split(NodePath.sep)
      for (let depth = 0; depth < parts.length; depth++) {
        const dir = NodePath.join(options.root, ...parts.slice(0, depth))
        const rules = yield* readRules(dir, parts.slice(depth).join("/"), "")
        if (rules !== undefined) ancestors.push(rules)
      }
    }
    const files: Array<string> = []
    const queue: Array<{ readonly relative: string; readonly stack: ReadonlyArray<Rules> }> = [{ relative: "", stack: ancestors }]
    while (queue.length > 0) {
      const next = queue.shift()
      if (next === undefined) break
      const absolute = next.relative === "" ? base : NodePath.join(base, next.relative)
      // A folder that cannot be listed (permissions, removed meanwhile) is skipped, as grep -r does; the base
      // itself must be listable.
      const entries = yield* Effect.try({
        try: () => NodeFs.readdirSync(absolute, { withFileTypes: true }),
        catch: (error) => toolFailure("UNEXPECTED", `could not list ${absolute}: ${describeUnknown(error)}`)
      }).pipe(Effect.catchAll((failure) => (next.relative === "" ? Effect.fail(failure) : Effect.succeed([]))))
      const own = entries.some((entry) => entry.name === ".gitignore" && entry.isFile())
        ? yield* readRules(absolute, "", next.relative)
        : undefined
      const stack = own === undefined ? next.stack : [...next.stack, own]
      for (const entry of entries) {
        const relative = next.relative === "" ? entry.name : `${next.relative}/${entry.name}`
        if (entry.isDirectory()) {
          if (!alwaysSkipped.has(entry.name.toLowerCase()) && !ignoredBy(stack, relative, true)) queue.push({ relative, stack })
        } else if (entry.isFile() && !ignoredBy(stack, relative, false)) {
          files.push(relative)
          if (files.length >= options.maxFiles) return { files, truncated: true }
        }
      }
      if (queue.length % 64 === 0) yield* Effect.yieldNow()
    }
    return { files, truncated: false }
  }).pipe(Effect.withSpan("kern.tools.walkFiles"))
