/**
 * Where an imported memory file lands in the agent folder. Never over an existing file: one with the same bytes is
 * already there (a second import of the same source writes nothing), one with other bytes keeps its name and the
 * import is written beside it as `<name>.imported-<kind>.md` (then `-2`, `-3`, …). Nothing is written through a
 * symlink or outside the folder, and never under `.kern/`: every folder on the way must be a real folder of the
 * agent's, and the file is created with O_EXCL.
 */
import { Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { ImportKind, Skipped } from "./ImportPlan.js"

export interface Placed {
  /** written: at its own name; renamed: beside a different file of that name; same: the same bytes were there. */
  readonly outcome: "written" | "renamed" | "same"
  /** Where it is, relative to the agent folder. */
  readonly path: string
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

const codeOf = (error: unknown) => (typeof error === "object" && error !== null && "code" in error ? String(error.code) : "")

/** Whether `target` is a path a memory file may have: relative, inside, not under .kern/, a .md file. */
export const memoryTargetProblem = (target: string): string | undefined => {
  const parts = target.split("/")
  if (target.startsWith("/") || parts.some((p) => p === "" || p === "." || p === "..")) return "not a plain relative path"
  if (parts.some((p) => p.toLowerCase() === ".kern" || p === ".git")) return "under .kern/ or .git/"
  if (!target.endsWith(".md")) return "not a Markdown file"
  return undefined
}

const alternatives = (target: string, kind: ImportKind): Array<string> => {
  const stem = target.slice(0, -".md".length)
  return [target, `${stem}.imported-${kind}.md`, ...Array.from({ length: 48 }, (_, i) => `${stem}.imported-${kind}-${i + 2}.md`)]
}

/** Places `bytes` at `target` (or beside it) in the agent folder `agentDir` (its real path); `dryRun` writes nothing. */
export const placeMemory = (
  agentDir: string,
  target: string,
  bytes: Uint8Array,
  kind: ImportKind,
  options: { readonly dryRun: boolean; readonly label: string }
): Either.Either<Placed, Skipped> => {
  const skip = (why: string) => Either.left<Skipped>({ what: options.label, why })
  const problem = memoryTargetProblem(target)
  if (problem !== undefined) return skip(`its place in the agent folder, ${target}, is ${problem}`)
  // Each folder on the way: a real folder (made when missing), never a symlink.
  const folders = target.split("/").slice(0, -1)
  for (let i = 1; i <= folders.length; i++) {
    const rel = folders.slice(0, i).join("/")
    const path = NodePath.join(agentDir, rel)
    const stat = NodeFs.lstatSync(path, { throwIfNoEntry: false })
    if (stat === undefined) {
      if (options.dryRun) break
      try {
        NodeFs.mkdirSync(path)
      } catch (error) {
        return skip(`could not make ${rel}/: ${describe(error)}`)
      }
    } else if (!stat.isDirectory()) {
      return skip(`${rel} in the agent folder is ${stat.isSymbolicLink() ? "a symlink" : "not a folder"}: nothing is written through it`)
    }
  }
  for (const candidate of alternatives(target, kind)) {
    const path = NodePath.join(agentDir, candidate)
    const stat = NodeFs.lstatSync(path, { throwIfNoEntry: false })
    if (stat !== undefined) {
      if (stat.isFile() && stat.size === bytes.byteLength && Buffer.from(bytes).equals(NodeFs.readFileSync(path))) {
        return Either.right({ outcome: "same", path: candidate })
      }
      continue
    }
    if (!options.dryRun) {
      try {
        // O_EXCL: a file (or link) that appeared meanwhile is never written over or through.
        NodeFs.writeFileSync(path, bytes, { flag: "wx" })
      } catch (error) {
        if (codeOf(error) === "EEXIST") continue
        return skip(`could not write ${candidate}: ${describe(error)}`)
      }
    }
    return Either.right({ outcome: candidate === target ? "written" : "renamed", path: candidate })
  }
  return skip(`${target} and 49 names beside it are taken by other files`)
}
