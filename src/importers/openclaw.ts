/**
 * An OpenClaw folder: its state folder (`~/.openclaw`: `workspace/` and `agents/<agentId>/sessions/*.jsonl`) or a
 * workspace on its own. The workspace's memory (docs.openclaw.ai/concepts/memory) is plain Markdown: `MEMORY.md`
 * (curated long-term memory) and `memory/YYYY-MM-DD.md` (daily logs). A daily log becomes kern's daily note
 * `notes/YYYY-MM-DD.md`; MEMORY.md and any other file under `memory/` go to `knowledge/openclaw/`. Transcripts are
 * read as openclawMessages.ts says; compaction checkpoints (`*.checkpoint.*.jsonl`) are copies and are left out.
 */
import { Clock, Effect, Either, Schema } from "effect"
import * as NodeFs from "node:fs"
import { isNoteName } from "../memory/notes.js"
import { agentFileMaxBytes } from "../storage/agentFiles.js"
import type { ImportError } from "./ImportError.js"
import type { ImportPlan, MemorySource, SessionSource, Skipped } from "./ImportPlan.js"
import { maxSessionBytes } from "./kernAi.js"
import { convertOpenclaw } from "./openclawMessages.js"
import { decodeOr, jsonLines, makeNotes, timeOf } from "./sessionBuilder.js"
import { entryIn, folderInside, listFiles, sourceReader } from "./sourceFiles.js"

const Header = Schema.Struct({ type: Schema.Literal("session"), id: Schema.optional(Schema.String), timestamp: Schema.optional(Schema.Unknown) })
const decodeHeader = decodeOr(Header)

const workspaceMarkers = ["memory", "MEMORY.md", "SOUL.md", "AGENTS.md"]

/** Whether `root` looks like an OpenClaw state folder or workspace. */
export const looksLikeOpenclaw = (root: string): boolean =>
  entryIn(root, "openclaw.json") || entryIn(root, "agents") || entryIn(root, "workspace") || entryIn(root, "SOUL.md") ||
  entryIn(root, "MEMORY.md") || entryIn(root, "memory")

/** Where a workspace memory file goes in the agent folder. */
const targetOf = (rel: string): string =>
  rel === "MEMORY.md"
    ? "knowledge/openclaw/MEMORY.md"
    : rel.startsWith("memory/") && !rel.slice(7).includes("/") && isNoteName(rel.slice(7))
    ? `notes/${rel.slice(7)}`
    : `knowledge/openclaw/${rel}`

const memoryOf = (root: string, skipped: Array<Skipped>): Array<MemorySource> => {
  const inWorkspace = folderInside(root, "workspace")
  if (Either.isLeft(inWorkspace)) {
    skipped.push(inWorkspace.left)
    return []
  }
  const workspace = inWorkspace.right ?? (workspaceMarkers.some((m) => entryIn(root, m)) ? root : undefined)
  if (workspace === undefined) return []
  const prefix = workspace === root ? "" : "workspace/"
  const read = sourceReader(workspace, agentFileMaxBytes, (rel) => `${prefix}${rel}`)
  const memory: Array<MemorySource> = []
  const top = listFiles(workspace, `${prefix}.`, (rel) => rel === "MEMORY.md", { recursive: false })
  skipped.push(...top.skipped)
  for (const rel of top.files) memory.push({ label: `${prefix}${rel}`, target: targetOf(rel), read: read(rel) })
  const inMemory = folderInside(workspace, "memory")
  if (Either.isLeft(inMemory)) skipped.push({ ...inMemory.left, what: `${prefix}memory` })
  else if (inMemory.right !== undefined) {
    const listed = listFiles(inMemory.right, `${prefix}memory`, (rel) => rel.endsWith(".md"), { recursive: true })
    skipped.push(...listed.skipped)
    for (const rel of listed.files) memory.push({ label: `${prefix}memory/${rel}`, target: targetOf(`memory/${rel}`), read: read(`memory/${rel}`) })
  }
  return memory
}

/** The transcript folders: `sessions/` at the top, and each `agents/<agentId>/sessions/`. */
const transcriptFolders = (root: string, skipped: Array<Skipped>): Array<{ readonly dir: string; readonly label: string }> => {
  const folders: Array<{ dir: string; label: string }> = []
  const add = (rel: string) => {
    const inside = folderInside(root, rel)
    if (Either.isLeft(inside)) skipped.push(inside.left)
    else if (inside.right !== undefined) folders.push({ dir: inside.right, label: rel })
  }
  add("sessions")
  const agents = folderInside(root, "agents")
  if (Either.isLeft(agents)) skipped.push(agents.left)
  else if (agents.right !== undefined) {
    let names: Array<NodeFs.Dirent> = []
    try {
      names = NodeFs.readdirSync(agents.right, { withFileTypes: true })
    } catch (error) {
      skipped.push({ what: "agents", why: `could not be listed: ${error instanceof Error ? error.message : String(error)}` })
    }
    // Real folders only: a symlinked agent folder is not followed.
    for (const entry of names.sort((x, y) => (x.name < y.name ? -1 : 1))) {
      if (entry.isDirectory()) add(`agents/${entry.name}/sessions`)
      else if (entry.isSymbolicLink()) skipped.push({ what: `agents/${entry.name}`, why: "a symlink: not followed (an agent's folder must be inside the source)" })
    }
  }
  return folders
}

/** What an OpenClaw folder holds to import. */
export const planOpenclaw = (root: string): Effect.Effect<ImportPlan, ImportError> =>
  Effect.sync(() => {
    const skipped: Array<Skipped> = []
    const sessions: Array<SessionSource> = []
    for (const folder of transcriptFolders(root, skipped)) {
      const listed = listFiles(folder.dir, folder.label, (rel) => rel.endsWith(".jsonl") && !rel.includes("/"), { recursive: false })
      skipped.push(...listed.skipped)
      const read = sourceReader(folder.dir, maxSessionBytes, (rel) => `${folder.label}/${rel}`)
      for (const rel of listed.files) {
        const label = `${folder.label}/${rel}`
        if (rel.includes(".checkpoint.")) {
          skipped.push({ what: label, why: "a compaction checkpoint (a copy of a transcript)" })
          continue
        }
        const stem = rel.slice(0, -".jsonl".length)
        sessions.push({
          sourceId: stem,
          label,
          load: Effect.gen(function*() {
            const notes = makeNotes()
            const lines = jsonLines(yield* read(rel), notes)
            const header = lines[0] === undefined ? undefined : decodeHeader(lines[0].value)
            if (header === undefined) return yield* Effect.fail<Skipped>({ what: label, why: "not an OpenClaw transcript (no session header first)" })
            const createdAtMs = timeOf(header.timestamp) ?? (yield* Clock.currentTimeMillis)
            const messages = convertOpenclaw(lines.slice(1), createdAtMs, notes)
            return { sourceId: header.id ?? stem, createdAtMs, messages, notes: notes.lines() }
          })
        })
      }
    }
    const memory = memoryOf(root, skipped)
    return { kind: "openclaw", source: root, sessions, memory, skipped } satisfies ImportPlan
  })
