/**
 * Reading a source to import from, which is untrusted: every file goes through the agent-file door
 * (src/storage/agentFiles.ts) rooted at the source, so a symlink out of it, a hard link (whose other name may be a key
 * outside), a FIFO, a device or a file over its cap is skipped with the reason, never read. Folders are walked
 * without following symlinks, and a sub-folder the importer reads (kern-ai's `.kern/sessions`) is first checked to be
 * really inside the source.
 */
import { Effect, Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type AgentFileError, agentFileReader } from "../storage/agentFiles.js"
import { ImportError } from "./ImportError.js"
import type { Skipped } from "./ImportPlan.js"

/** The most files one source folder is listed for: a source of more is cut there, and the summary says so. */
export const maxListedFiles = 20_000

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Why the door refused a source file, in the source's terms. */
export const refusalText = (error: AgentFileError): string => {
  switch (error.reason) {
    case "missing":
      return "it is gone"
    case "outside":
      return `a symlink to ${error.detail}, outside the source: not followed`
    case "kern":
      return `it leads into a .kern folder (${error.detail}): not read`
    case "link-loop":
      return error.detail
    case "hard-link":
      return `a hard link (${error.detail} names for one file; another may be a key outside the source): not read`
    case "not-regular":
      return `a ${error.detail}, not a regular file`
    case "too-large":
      return `too large (${error.detail})`
    case "unreadable":
      return `unreadable: ${error.detail}`
  }
}

/** The source's real path; it must exist. */
export const sourceRoot = (path: string): Effect.Effect<string, ImportError> =>
  Effect.try({
    try: () => NodeFs.realpathSync.native(NodePath.resolve(path)),
    catch: (error) =>
      new ImportError({
        reason: "missing",
        message: `${path} does not exist or cannot be reached (${describe(error)})`
      })
  })

const inside = (root: string, real: string) => real === root || real.startsWith(root.endsWith("/") ? root : `${root}/`)

/**
 * `rel` under the source as a real folder inside it: `undefined` when it is not there (or not a folder), a Skipped
 * when a symlink takes it out of the source.
 */
export const folderInside = (root: string, rel: string): Either.Either<string | undefined, Skipped> => {
  const path = NodePath.join(root, rel)
  let real: string
  try {
    real = NodeFs.realpathSync.native(path)
  } catch {
    return Either.right(undefined)
  }
  if (!inside(root, real)) return Either.left({ what: rel, why: `a symlink to ${real}, outside the source: not followed` })
  try {
    return Either.right(NodeFs.statSync(real).isDirectory() ? real : undefined)
  } catch {
    return Either.right(undefined)
  }
}

/** Whether anything (a file, a folder, a link) is at `rel` in the source. */
export const entryIn = (root: string, rel: string): boolean => {
  try {
    NodeFs.lstatSync(NodePath.join(root, rel))
    return true
  } catch {
    return false
  }
}

/** Whether `rel` names a regular file (not a link) directly in the source. */
export const fileIn = (root: string, rel: string): boolean => {
  try {
    return NodeFs.lstatSync(NodePath.join(root, rel)).isFile()
  } catch {
    return false
  }
}

export interface Listed {
  /** Paths relative to the listed folder, `/`-separated, sorted. */
  readonly files: ReadonlyArray<string>
  readonly skipped: ReadonlyArray<Skipped>
}

/**
 * The files under `dir` (a real folder inside the source) whose relative path `keep` accepts. Symlinked folders are
 * not entered (a skip line says so); symlinked files are listed and left to the door. `label` names `dir` in skips.
 */
export const listFiles = (
  dir: string,
  label: string,
  keep: (rel: string) => boolean,
  options: { readonly recursive: boolean }
): Listed => {
  const files: Array<string> = []
  const skipped: Array<Skipped> = []
  const walk = (rel: string) => {
    let entries: Array<NodeFs.Dirent>
    try {
      entries = NodeFs.readdirSync(NodePath.join(dir, rel), { withFileTypes: true })
    } catch (error) {
      skipped.push({ what: NodePath.posix.join(label, rel), why: `could not be listed: ${describe(error)}` })
      return
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`
      if (entry.isDirectory()) {
        if (options.recursive) walk(path)
        continue
      }
      // A linked folder is said to be left out, whatever its name: silence would hide what was in it.
      if (entry.isSymbolicLink() && isFolderLink(NodePath.join(dir, path))) {
        skipped.push({ what: NodePath.posix.join(label, path), why: "a symlink to a folder: not followed" })
        continue
      }
      if (!keep(path)) continue
      if (files.length >= maxListedFiles) {
        skipped.push({ what: NodePath.posix.join(label, path), why: `more than ${maxListedFiles} files in ${label}: the rest were not read` })
        return
      }
      files.push(path)
    }
  }
  walk("")
  return { files, skipped }
}

const isFolderLink = (path: string) => {
  try {
    return NodeFs.statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * A reader of the files under `root` (a real folder inside the source), each up to `maxBytes`, through the door.
 * `label(rel)` names a file in skip lines.
 */
export const sourceReader = (root: string, maxBytes: number, label: (rel: string) => string) => {
  const read = agentFileReader({ roots: [root], maxBytes })
  return (rel: string): Effect.Effect<Uint8Array, Skipped> =>
    Effect.suspend(() => {
      const result = read(NodePath.join(root, rel))
      return Either.isRight(result)
        ? Effect.succeed(result.right.bytes)
        : Effect.fail({ what: label(rel), why: refusalText(result.left) })
    })
}
