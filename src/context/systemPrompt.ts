import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import { isMcpToolId } from "../kernel/mcpToolId.js"
import { modelToolName } from "../kernel/aiTools.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import { type FileCache, uncachedFiles } from "../memory/fileCache.js"
import { NotesSummary } from "../memory/NotesSummary.js"
import { orIfAbsent } from "../storage/agentFiles.js"
import { confinedAudience } from "../kernel/Audience.js"
import type { RunContextData } from "../kernel/RunContext.js"
import { audiencePreamble, sharedMemoryFiles } from "./audiencePrompt.js"
import { keptSpan } from "../kernel/keptSpan.js"

/** The memory files of the system prompt, in the order they are rendered (seed 003). */
const memoryFiles = ["AGENTS.md", "IDENTITY.md", "KERN.md", "KNOWLEDGE.md", "USERS.md"] as const

/**
 * One piece of the agent's memory as it goes into the context: what it is, where it comes from and its text.
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

/** A tool as the `<tools>` section lists it: the name the model calls it by and what it does. */
export interface PromptTool {
  readonly name: string
  readonly description: string
  /** Offered by name only: its definition is sent once tool_search loads it (mcpToolBudget). */
  readonly lazy?: boolean | undefined
  /**
   * Its `<tools>` line, when made beforehand (promptToolsOf): the turn's toolkit keeps its prompt tools, so the
   * description is cut to its first sentence once per toolkit, not at every step.
   */
  readonly line?: string | undefined
}

/** A skill as the `<skills>` section lists it (src/skills): its name and description only. */
export interface PromptSkill {
  readonly name: string
  readonly description: string
}

export interface SystemPromptOptions {
  /** The tools offered to this run; omitted: no `<tools>` section. */
  readonly tools?: ReadonlyArray<PromptTool> | undefined
  /** The skills, when read_skill is offered (src/turn/offeredTools.ts); omitted or none: no `<skills>` section. */
  readonly skills?: ReadonlyArray<PromptSkill> | undefined
  /** The whole rendered `<conversation_summary>` block, when messages are trimmed. */
  readonly conversationSummary?: string | undefined
  /**
   * Whose conversation the prompt serves and the run's tool scope: one that does not see everything (Audience.ts)
   * gets the shared files and a statement of who is speaking (audiencePrompt.ts), nothing of the operator's.
   * Omitted: the operator's prompt.
   */
  readonly run?: Pick<RunContextData, "audience" | "toolScope"> | undefined
}

/** One section of the system prompt as the model gets it. */
export interface SystemSection {
  readonly kind: "preamble" | "file" | "latest-note" | "notes-summary" | "skills" | "tools" | "conversation-summary"
  /**
   * A file name, `notes/…`, the notes summarized joined by ", ", "skills", "tools", "conversation" ("kern" for the
   * preamble).
   */
  readonly source: string
  /** The rendered section exactly as it appears in the prompt, with its tags. */
  readonly text: string
}

/**
 * The memory items, read through `files` on every turn so edits the agent makes to its own memory take effect at
 * once: AGENTS.md, IDENTITY.md, KERN.md, KNOWLEDGE.md, USERS.md, the latest daily note and the notes summary
 * (`NotesSummary.layerNone` where there is none). A missing or empty file is simply left out; an unreadable one with a warning.
 * `shared`: only the files every conversation has (sharedMemoryFiles), for one that is not the operator's.
 */
export const memoryItemsFrom = (files: FileCache, reach: "all" | "shared" = "all") => Effect.gen(function*() {
  const { paths } = yield* AgentConfig
  // A memory file that cannot be read (or that the door refuses: a link into .kern/ or out of the folder, a FIFO)
  // leaves a hole in the prompt, not a failed turn; only a missing one is silent.
  const read = (file: string) =>
    files.readString(file, paths.dir).pipe(
      Effect.tap(() => files.skipped.readFine(NodePath.relative(paths.dir, file))),
      Effect.map((text) => text.trim()),
      orIfAbsent(() => ""),
      Effect.catchAll((error) => Effect.as(files.skipped.skip("the system prompt", error), ""))
    )
  const unreadable = (file: string) => (error: PlatformError) =>
    Effect.as(Effect.logWarning(`memory file left out of the system prompt: ${file}: ${error.message}`), "")
  const notesDir = NodePath.join(paths.dir, "notes")
  const names: ReadonlyArray<string> = reach === "all" ? memoryFiles : sharedMemoryFiles
  // The files unchanged since the cache read them cost one stat each, all in one step; the others are read one after
  // another (the door's reads are synchronous too, less than a fiber each).
  // (The names are the files' paths relative to the folder, as `read` reports them read fine.)
  const filePaths = names.map((name) => NodePath.join(paths.dir, name))
  const unchanged = yield* files.unchangedTexts(filePaths, paths.dir)
  const texts = unchanged.every((text) => text !== undefined)
    ? yield* Effect.as(files.skipped.allReadFine(names), unchanged.map((text) => text.trim()))
    : yield* Effect.forEach(filePaths, (file, index) => {
      const text = unchanged[index]
      return text === undefined ? read(file) : Effect.as(files.skipped.readFine(names[index]!), text.trim())
    })
  const items: Array<MemoryItem> = []
  names.forEach((name, index) => {
    const text = texts[index] ?? ""
    if (text !== "") items.push({ kind: "file", source: name, text })
  })
  if (reach === "shared") return items
  const notes = yield* files.notes(paths.dir).pipe(
    Effect.catchAll((error) => Effect.as(unreadable(notesDir)(error), [] as ReadonlyArray<string>))
  )
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
}).pipe(keptSpan("kern.agent.memoryItems"))

/** The memory items, every file read afresh. */
export const memoryItems = Effect.flatMap(uncachedFiles, memoryItemsFrom)

/** The tags kern wraps the system prompt's sections in. */
export const sectionTags = ["document", "notes_summary", "skills", "tools", "conversation_summary"] as const

const tagPattern = (tags: ReadonlyArray<string>) => new RegExp(`<(/?)(${tags.join("|")})(?=[\\s/>]|$)`, "gi")
const sectionTagPattern = tagPattern(sectionTags)

/**
 * `text` with every opening and closing tag of `tags` turned into `&lt;…`: a memory file (or a tool's description,
 * or a summary) quoting `</document>` or `<conversation_summary>` can neither end its own section early nor forge
 * another, for the model or for the web UI's parser. Only these tags change; all other markup reaches the model as
 * written. The conversation summary's renderer passes `[...sectionTags, "summary"]` for the summaries' own text.
 */
export const escapeSectionText = (text: string, tags: ReadonlyArray<string> = sectionTags): string =>
  text.replace(tags === sectionTags ? sectionTagPattern : tagPattern(tags), (_match, slash: string, tag: string) => `&lt;${slash}${tag}`)

const attribute = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const element = (open: string, close: string, body: string) => `<${open}>\n${escapeSectionText(body)}\n</${close}>`

const document = (path: string, text: string) => element(`document path="${attribute(path)}"`, "document", text)

const sectionOf = (item: MemoryItem): SystemSection => {
  switch (item.kind) {
    case "file":
    case "latest-note":
      return { kind: item.kind, source: item.source, text: document(item.source, item.text) }
    case "notes-summary": {
      const of = item.source.join(", ")
      const stale = item.fresh ? "" : " stale=\"true\""
      return { kind: "notes-summary", source: of, text: element(`notes_summary of="${attribute(of)}"${stale}`, "notes_summary", item.text) }
    }
  }
}

/** Longest description line in `<tools>`: the full description comes with the tool's definition anyway. */
const toolLineMax = 200

const abbreviation = /(?:^|\W)(?:e\.g|i\.e|vs)$/i

/**
 * The first sentence (or line) of a description: a full stop followed by a word or the end ends it; "e.g. {" and
 * "e.g. read" do not.
 */
export const firstSentence = (description: string): string => {
  const line = description.trim().split("\n")[0]?.trim() ?? ""
  let sentence = line
  for (const end of line.matchAll(/[.!?](?=\s+[A-Za-z`"(]|\s*$)/g)) {
    if (abbreviation.test(line.slice(0, end.index))) continue
    sentence = line.slice(0, end.index + 1)
    break
  }
  return sentence.length <= toolLineMax ? sentence : `${sentence.slice(0, toolLineMax - 1).trimEnd()}…`
}

/** Heads the tools offered by name only: the same words every turn, so the prompt's cached prefix holds. */
export const lazyToolsHeading =
  "Load with tool_search (their definitions are not sent until you load them; one loaded stays for the rest of the turn):"

const toolLine = (tool: PromptTool) => `${tool.name}: ${firstSentence(tool.description)}`

const toolLines = (tools: ReadonlyArray<PromptTool>) => tools.map((tool) => tool.line ?? toolLine(tool))

const toolsSection = (tools: ReadonlyArray<PromptTool>): SystemSection => {
  const lazy = tools.filter((tool) => tool.lazy === true)
  const body = tools.length === 0
    ? "No tools are offered in this turn: answer from what you know and what is in this prompt."
    : lazy.length === 0
    ? toolLines(tools).join("\n")
    : [...toolLines(tools.filter((tool) => tool.lazy !== true)), "", lazyToolsHeading, ...toolLines(lazy)].join("\n")
  return { kind: "tools", source: "tools", text: element("tools", "tools", body) }
}

/**
 * `<skills>`: each skill's name and description on a line, sorted by name, nothing that changes between turns while
 * the skills do not (no sizes, no times): the system prompt is one cached block (caching.ts), so it stays a cache hit.
 */
const skillsSection = (skills: ReadonlyArray<PromptSkill>): SystemSection => {
  const lines = [...skills].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((skill) => `${skill.name}: ${skill.description.replace(/\s+/g, " ").trim()}`)
  const body = "Skills hold instructions for particular tasks. When a task matches a skill's description, load the " +
    `skill with read_skill before you start.\n${lines.join("\n")}`
  return { kind: "skills", source: "skills", text: element("skills", "skills", body) }
}

/**
 * The registered tools as the model is offered them: by the function name it calls (`kern_pair`, not "Kern pair");
 * with `lazyMcp`, the MCP tools marked as offered by name only.
 */
export const promptToolsOf = (tools: ReadonlyArray<RegisteredTool>, lazyMcp = false): ReadonlyArray<PromptTool> =>
  tools.map((tool) => {
    const listed = { name: modelToolName(tool.spec.toolId), description: tool.spec.description }
    return { ...listed, line: toolLine(listed), ...(lazyMcp && isMcpToolId(tool.spec.toolId) ? { lazy: true } : {}) }
  })

/** The system prompt's first section: who the agent is and where. */
export const preamble = (name: string, dir: string): string =>
  `You are ${name}, a long-lived agent run by kern in the folder ${dir}. ` +
  "Your memory is the files below; keep them current with your tools. Reply NO_REPLY when nothing needs saying."

/** Between the system prompt's sections. */
export const sectionSeparator = "\n\n"

/**
 * The system prompt section by section, in seed 003's order: the preamble, AGENTS.md, IDENTITY.md, KERN.md,
 * KNOWLEDGE.md, USERS.md, the latest daily note, `<notes_summary>`, `<skills>`, `<tools>` and `<conversation_summary>`
 * (the last three only when given). Files come through `files`: the turn runner's cache reads a file again only when it changed.
 * For a conversation that is not the operator's (`options.run`): its preamble, AGENTS.md, IDENTITY.md, KERN.md,
 * `<skills>`, `<tools>` and its own `<conversation_summary>`.
 */
export const systemSectionsFrom = (files: FileCache, options: SystemPromptOptions = {}) => Effect.gen(function*() {
  const { config, paths } = yield* AgentConfig
  const run = options.run ?? {}
  const audience = confinedAudience(run)
  const items = yield* memoryItemsFrom(files, audience !== undefined ? "shared" : "all")
  // The statement quotes the sender's paired name: escaped like a file's text, it cannot open a section of its own.
  const opening = audience !== undefined
    ? escapeSectionText(audiencePreamble(config.name, audience, run.toolScope ?? config.toolScope))
    : preamble(config.name, paths.dir)
  const sections: Array<SystemSection> = [
    { kind: "preamble", source: "kern", text: opening },
    ...items.map(sectionOf)
  ]
  if (options.skills !== undefined && options.skills.length > 0) sections.push(skillsSection(options.skills))
  if (options.tools !== undefined) sections.push(toolsSection(options.tools))
  const summary = options.conversationSummary?.trim()
  if (summary !== undefined && summary !== "") sections.push({ kind: "conversation-summary", source: "conversation", text: summary })
  return sections as ReadonlyArray<SystemSection>
}).pipe(keptSpan("kern.agent.systemSections"))

/** The sections as one prompt. */
export const renderSystemPrompt = (sections: ReadonlyArray<SystemSection>): string =>
  sections.map((section) => section.text).join(sectionSeparator)

/** The system prompt as one text; see systemSectionsFrom. */
export const buildSystemPromptFrom = (files: FileCache, options: SystemPromptOptions = {}) =>
  Effect.map(systemSectionsFrom(files, options), renderSystemPrompt).pipe(keptSpan("kern.agent.systemPrompt"))

/** The system prompt, every file read afresh (no tools section, no conversation summary). */
export const buildSystemPrompt = Effect.flatMap(uncachedFiles, (files) => buildSystemPromptFrom(files))
