import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import { NotesSummary } from "../memory/NotesSummary.js"
import { orIfMissing } from "../storage/missingFile.js"

const memoryFiles = ["KERN.md", "AGENTS.md", "IDENTITY.md", "USERS.md", "KNOWLEDGE.md"] as const
const notePattern = /^\d{4}-\d{2}-\d{2}\.md$/

/**
 * The system prompt: the agent's memory files, its latest daily note and the notes summary, read fresh for every turn so edits the
 * agent makes to its own memory take effect at once. A missing file is simply left out.
 */
export const buildSystemPrompt = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const { config, paths } = yield* AgentConfig
  // A memory file that cannot be read leaves a hole in the prompt, not a failed turn; only a missing one is silent.
  const unreadable = (file: string) => (error: PlatformError) =>
    Effect.as(Effect.logWarning(`memory file left out of the system prompt: ${file}: ${error.message}`), "")
  const read = (file: string) =>
    fs.readFileString(file).pipe(
      Effect.map((text) => text.trim()),
      orIfMissing(() => ""),
      Effect.catchAll(unreadable(file))
    )
  const sections: Array<string> = [
    `You are ${config.name}, a long-lived agent run by kern in the folder ${paths.dir}. ` +
    "Your memory is the files below; keep them current with your tools. Reply NO_REPLY when nothing needs saying."
  ]
  const notesDir = NodePath.join(paths.dir, "notes")
  // Read together: each is a round trip to the file system's thread pool.
  const [texts, notes] = yield* Effect.all([
    Effect.forEach(memoryFiles, (name) => read(NodePath.join(paths.dir, name)), { concurrency: "unbounded" }),
    fs.readDirectory(notesDir).pipe(
      orIfMissing((): Array<string> => []),
      Effect.catchAll((error) => Effect.as(unreadable(notesDir)(error), [] as Array<string>))
    )
  ], { concurrency: "unbounded" })
  memoryFiles.forEach((name, index) => {
    const text = texts[index] ?? ""
    if (text !== "") sections.push(`<file name="${name}">\n${text}\n</file>`)
  })
  const latest = notes.filter((name) => notePattern.test(name)).sort().pop()
  if (latest !== undefined) {
    const text = yield* read(NodePath.join(notesDir, latest))
    if (text !== "") sections.push(`<file name="notes/${latest}" note="latest daily note">\n${text}\n</file>`)
  }
  // The runtime provides the summary where it runs one; a bare prompt (tests, tools) goes without.
  const summaries = yield* Effect.serviceOption(NotesSummary)
  if (Option.isSome(summaries)) {
    const summary = yield* summaries.value.current
    if (Option.isSome(summary)) {
      const { fresh, sources, text } = summary.value
      sections.push(
        `<notes-summary of="${sources.join(", ")}"${fresh ? "" : " stale=\"true\""}>\n${text}\n</notes-summary>`
      )
    }
  }
  return sections.join("\n\n")
}).pipe(Effect.withSpan("kern.agent.systemPrompt"))
