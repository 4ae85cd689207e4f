import { FileSystem } from "@effect/platform"
import { Clock, Effect } from "effect"
import * as NodePath from "node:path"
import {
  type AgentFileError,
  inspectAgentFile,
  orIfAbsent,
  readAgentText,
  reportEverySkip,
  type SkippedFiles
} from "../storage/agentFiles.js"
import { orIfMissing } from "../storage/missingFile.js"

const dayMs = 24 * 60 * 60 * 1000

export interface StaleFile {
  /** Relative to the agent folder, e.g. `knowledge/hosts.md`. */
  readonly file: string
  /** Whole days since it last changed. */
  readonly days: number
}

/** What needs the agent's care in knowledge/: files unchanged for too long, files KNOWLEDGE.md does not mention. */
export interface KnowledgeReport {
  readonly stale: ReadonlyArray<StaleFile>
  readonly unindexed: ReadonlyArray<string>
}

export const needsCare = (report: KnowledgeReport): boolean => report.stale.length > 0 || report.unindexed.length > 0

/**
 * The knowledge files (`knowledge/**.md`) not changed for `staleDays` days (on the Clock, by modification time) and
 * those the KNOWLEDGE.md index does not mention by their path under knowledge/ (`hosts.md` or `knowledge/hosts.md`).
 * Files are checked through the door (src/storage/agentFiles.ts): one it refuses (a link into .kern/ or out of the
 * folder, a FIFO) is reported to `skipped` and left out.
 */
export const knowledgeReport = (dir: string, staleDays: number, skipped: SkippedFiles = reportEverySkip()) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = NodePath.join(dir, "knowledge")
    const names = yield* fs.readDirectory(root, { recursive: true }).pipe(orIfMissing(() => []))
    const files = names.filter((name) => name.endsWith(".md")).sort()
    const skip = (error: AgentFileError) => Effect.as(skipped.skip("the knowledge check", error), undefined)
    const index = yield* readAgentText("KNOWLEDGE.md", { roots: [dir] }).pipe(orIfAbsent(() => ""), Effect.catchAll(skip))
    const now = yield* Clock.currentTimeMillis
    const stale: Array<StaleFile> = []
    const unindexed: Array<string> = []
    for (const name of files) {
      const relative = `knowledge/${name.split(NodePath.sep).join("/")}`
      const info = yield* inspectAgentFile(relative, { roots: [dir] }).pipe(
        Effect.catchAll((error) => error.reason === "missing" || (error.reason === "not-regular" && error.detail === "directory")
          ? Effect.succeed(undefined)
          : skip(error))
      )
      if (info === undefined) continue
      const days = Math.floor((now - info.mtimeMs) / dayMs)
      if (days >= staleDays) stale.push({ file: relative, days })
      if (!(index ?? "").includes(relative.slice("knowledge/".length))) unindexed.push(relative)
    }
    return { stale, unindexed } satisfies KnowledgeReport
  }).pipe(Effect.withSpan("kern.memory.knowledgeReport"))
