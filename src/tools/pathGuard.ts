import type { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import type { AgentFileOptions } from "../storage/agentFiles.js"
import { errnoCode, fileFailure } from "./failures.js"

/** What a file tool means to do with a path: writes are held to more than reads. */
export type Access = "read" | "write"

/** A path the guard let through: `path` is the real absolute path, `display` what to call it in messages. */
export interface ResolvedPath {
  readonly path: string
  readonly display: string
}

/**
 * Folders file tools treat specially wherever they sit, compared without case (a case-insensitive disk opens `.KERN`
 * as `.kern`): `.kern` is never reached, `.git` only read.
 */
export const protectedDirs = { kern: ".kern", git: ".git" } as const

const maxSymlinkHops = 40

/** Where a guard lets paths go, and how its refusals name that place. */
export interface Bounds {
  /** The folders as named, the first one where relative paths start. */
  readonly lexical: ReadonlyArray<string>
  /** The same folders' real paths. */
  readonly real: ReadonlyArray<string>
  /** Whether paths outside are refused (the workspace guard); `.kern/` and writes to `.git/` are refused always. */
  readonly guard: boolean
  /** The refusal of a path named outside. */
  readonly outside: (requested: string) => string
  /** The refusal of a path whose real path (through a symlink) lies outside. */
  readonly escapes: (requested: string, real: string) => string
}

/** How file tools reach paths within some bounds: resolve a named path, name a real one, open one through the door. */
export interface PathGuard {
  readonly root: string
  readonly resolve: (path: string, access?: Access) => Effect.Effect<ResolvedPath, ToolFailure>
  readonly display: (absolute: string) => string
  readonly fileOptions: (file: ResolvedPath, maxBytes: number) => AgentFileOptions
}

const loopFailure = (display: string) =>
  toolFailure("VALIDATION_ERROR", `${display}: too many levels of symbolic links (a symlink loop)`)

export const makePathGuard = (fs: FileSystem.FileSystem, path: Path.Path, bounds: Bounds): PathGuard => {
  const lexicalRoots = bounds.lexical
  const realRoots = bounds.real
  const root = realRoots[0] ?? lexicalRoots[0] ?? path.resolve(".")
  const guard = bounds.guard

  const within = (candidate: string, dirs: ReadonlyArray<string>) =>
    dirs.some((dir) => {
      const rel = path.relative(dir, candidate)
      return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
    })

  const display = (absolute: string) => {
    const rel = path.relative(root, absolute)
    return rel === "" ? "." : !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : absolute
  }

  // realpath of a path that may not exist yet: the nearest existing parent is resolved, dangling symlinks followed.
  const realResolve = (absolute: string, shown: string, hops: number): Effect.Effect<string, ToolFailure> =>
    hops > maxSymlinkHops
      ? Effect.fail(loopFailure(shown))
      : fs.realPath(absolute).pipe(
        Effect.catchAll((error: PlatformError): Effect.Effect<string, ToolFailure> => {
          if (errnoCode(error) === "ELOOP") return Effect.fail(loopFailure(shown))
          if (error._tag !== "SystemError" || error.reason !== "NotFound") return Effect.fail(fileFailure(shown)(error))
          return fs.readLink(absolute).pipe(
            Effect.matchEffect({
              onSuccess: (target) => realResolve(path.resolve(path.dirname(absolute), target), shown, hops + 1),
              onFailure: () => {
                const parent = path.dirname(absolute)
                return parent === absolute
                  ? Effect.succeed(absolute)
                  : Effect.map(realResolve(parent, shown, hops), (real) => path.join(real, path.basename(absolute)))
              }
            })
          )
        })
      )

  const allRoots = [...realRoots, ...lexicalRoots]
  /** The folder names of `absolute` below the root that holds it (all of them when no root does), lower-cased. */
  const namesBelowRoot = (absolute: string): ReadonlyArray<string> => {
    const holder = allRoots.find((dir) => within(absolute, [dir]))
    const rel = holder === undefined ? absolute : path.relative(holder, absolute)
    return rel.split(/[\\/]+/).filter((name) => name !== "").map((name) => name.toLowerCase())
  }

  const protectedFailure = (requested: string, absolute: string, access: Access) => {
    const names = namesBelowRoot(absolute)
    if (names.includes(protectedDirs.kern)) {
      return toolFailure(
        "PERMISSION_DENIED",
        `${requested} is under .kern/, which holds kern's config, secrets and database; file tools may not touch it`
      )
    }
    if (access === "write" && names.includes(protectedDirs.git)) {
      return toolFailure(
        "PERMISSION_DENIED",
        `${requested} is under .git/; file tools may read git's files but not write them (a hook or config written there would run as the operator)`
      )
    }
    return undefined
  }

  const resolve = (requested: string, access: Access = "read"): Effect.Effect<ResolvedPath, ToolFailure> =>
    Effect.gen(function*() {
      if (requested.trim() === "") return yield* toolFailure("VALIDATION_ERROR", "path is empty")
      if (requested.includes("\0")) return yield* toolFailure("VALIDATION_ERROR", "path contains a NUL character")
      const absolute = path.resolve(root, requested)
      if (guard && !within(absolute, allRoots)) return yield* toolFailure("PERMISSION_DENIED", bounds.outside(requested))
      // Checked before the real path is looked up too, so a `.kern` that is a symlink elsewhere is still refused.
      const named = protectedFailure(requested, absolute, access)
      if (named !== undefined) return yield* named
      const real = yield* realResolve(absolute, requested, 0)
      const reached = protectedFailure(requested, real, access)
      if (reached !== undefined) return yield* reached
      if (guard && !within(real, realRoots)) return yield* toolFailure("PERMISSION_DENIED", bounds.escapes(requested, real))
      return { path: real, display: display(real) }
    }).pipe(Effect.withSpan("kern.tools.Workspace.resolve"))

  return {
    root,
    resolve,
    display,
    fileOptions: (file, maxBytes) => ({ roots: realRoots, outside: guard ? "refuse" : "allow", maxBytes, display: file.display })
  }
}
