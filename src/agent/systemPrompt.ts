import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import { listNotes } from "../memory/notes.js"
import { NotesSummary } from "../memory/NotesSummary.js"
import { orIfMissing } from "../storage/missingFile.js"

/** The memory files of the system prompt, in the order they are rendered. */
const memoryFiles = ["AGENTS.md", "IDENTITY.md", "KERN.md", "KNOWLEDGE.md", "USERS.md"] as const

/**
 * One piece of the agent's memory as it goes into the context: what it is, where it comes from and its text. The
 * context budget places and counts these; until it does, buildSystemPrompt renders them in order.
 */
export type MemoryItem =
  | { readonly kind: "file"; readonly source: string; readonly text: string }
  | { readonly kind: "latest-note"; readonly source: string; readonly text: string }
  | {
    readonly kind: "notes-summary"
    /** The notes summarized. */
    readonly source: ReadonlyArray<string>
    readonly text: string
    readonly fresh: boolean
  }

/**
 * The memory items, read fresh for every turn so edits the agent makes to its own memory take effect at once:
 * AGENTS.md, IDENTITY.md, KERN.md, KNOWLEDGE.md, USERS.md, the latest daily note and the notes summary
 * (`NotesSummary.layerNone` where there is none). A missing or empty file is simply left out; an unreadable one with a warning.
 */
export const memoryItems = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const { paths } = yield* AgentConfig
  // A memory file that cannot be read leaves a hole in the prompt, not a failed turn; only a missing one is silent.
  const unreadable = (file: string) => (error: PlatformError) =>
    Effect.as(Effect.logWarning(`memory file left out of the system prompt: ${file}: ${error.message}`), "")
  const read = (file: string) =>
    fs.readFileString(file).pipe(
      Effect.map((text) => text.trim()),
      orIfMissing(() => ""),
      Effect.catchAll(unreadable(file))
    )
  const notesDir = NodePath.join(paths.dir, "notes")
  // Read together: each is a round trip to the file system's thread pool.
  const [texts, notes] = yield* Effect.all([
    Effect.forEach(memoryFiles, (name) => read(NodePath.join(paths.dir, name)), { concurrency: "unbounded" }),
    listNotes(paths.dir).pipe(Effect.catchAll((error) => Effect.as(unreadable(notesDir)(error), [] as Array<string>)))
  ], { concurrency: "unbounded" })
  const items: Array<MemoryItem> = []
  memoryFiles.forEach((name, index) => {
    const text = texts[index] ?? ""
    if (text !== "") items.push({ kind: "file", source: name, text })
  })
  const latest = notes.at(-1)
  if (latest !== undefined) {
    const text = yield* read(NodePath.join(notesDir, latest))
    if (text !== "") items.push({ kind: "latest-note", source: `notes/${latest}`, text })
  }
  const summary = yield* Effect.flatMap(NotesSummary, (summaries) => summaries.current)
  if (Option.isSome(summary)) {
    const { fresh, sources, text } = summary.value
    items.push({ kind: "notes-summary", source: sources, text, fresh })
  }
  return items
}).pipe(Effect.withSpan("kern.agent.memoryItems"))

export const renderMemoryItem = (item: MemoryItem): string => {
  switch (item.kind) {
    case "file":
      return `<file name="${item.source}">\n${item.text}\n</file>`
    case "latest-note":
      return `<file name="${item.source}" note="latest daily note">\n${item.text}\n</file>`
    case "notes-summary":
      return `<notes-summary of="${item.source.join(", ")}"${item.fresh ? "" : " stale=\"true\""}>\n${item.text}\n</notes-summary>`
  }
}

/** The system prompt's first section: who the agent is and where. */
export const preamble = (name: string, dir: string): string =>
  `You are ${name}, a long-lived agent run by kern in the folder ${dir}. ` +
  "Your memory is the files below; keep them current with your tools. Reply NO_REPLY when nothing needs saying."

/** Between the system prompt's sections. */
export const sectionSeparator = "\n\n"

/** The system prompt: who the agent is, then its memory items in order. */
export const buildSystemPrompt = Effect.gen(function*() {
  const { config, paths } = yield* AgentConfig
  const items = yield* memoryItems
  return [preamble(config.name, paths.dir), ...items.map(renderMemoryItem)].join(sectionSeparator)
}).pipe(Effect.withSpan("kern.agent.systemPrompt"))
