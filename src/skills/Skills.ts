import { Effect, Either, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { AgentConfig, type LoadedConfig } from "../config/AgentConfig.js"
import { readSkillText, scanSkills, type Skill, type SkillCatalog, type SkillFolder } from "./catalog.js"
import { keptSpan } from "../kernel/keptSpan.js"

/** A skill that cannot be given: none of that name, or a file of it that cannot be read. */
export class SkillError extends Schema.TaggedError<SkillError>()("SkillError", {
  reason: Schema.Literal("unknown", "file"),
  message: Schema.String
}) {}

/** One file beside a skill's SKILL.md. */
export interface SkillEntry {
  /** Relative to the skill's folder, `/`-separated. */
  readonly path: string
  readonly size: number
  /** A symbolic link is listed, never followed. */
  readonly link: boolean
}

/** Files listed for one skill; more are counted, not listed. */
export const maxListedFiles = 200

const skippedFolders: ReadonlySet<string> = new Set([".git", "node_modules", ".kern"])

/** The files of a skill's folder, SKILL.md aside, sorted: links are not followed, `.git` and the like are skipped. */
export const skillEntries = (dir: string): { readonly files: ReadonlyArray<SkillEntry>; readonly more: number } => {
  const files: Array<SkillEntry> = []
  let more = 0
  const queue = [""]
  while (queue.length > 0) {
    const relative = queue.shift() ?? ""
    let entries: Array<NodeFs.Dirent>
    try {
      entries = NodeFs.readdirSync(NodePath.join(dir, relative), { withFileTypes: true })
    } catch {
      // A folder that cannot be listed is left out, as the file tools' walk does.
      continue
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`
      if (path === "SKILL.md") continue
      if (entry.isDirectory()) {
        if (!skippedFolders.has(entry.name.toLowerCase())) queue.push(path)
        continue
      }
      if (!entry.isFile() && !entry.isSymbolicLink()) continue
      if (files.length >= maxListedFiles) {
        more++
        continue
      }
      const stat = NodeFs.lstatSync(NodePath.join(dir, path), { throwIfNoEntry: false })
      files.push({ path, size: stat?.size ?? 0, link: entry.isSymbolicLink() })
    }
  }
  return { files, more }
}

/**
 * A `skillsPaths` entry as a folder: `~` and `~/…` from `home` (the agent's HOME, else the OS's), a relative path
 * from the agent folder.
 */
export const skillsFolder = (entry: string, agentDir: string, home: string | undefined): string => {
  const base = home ?? NodeOs.homedir()
  const expanded = entry === "~" ? base : entry.startsWith("~/") ? NodePath.join(base, entry.slice(2)) : entry
  return NodePath.resolve(agentDir, expanded)
}

/** The folders of skills of an agent: its own `skills/`, then each of `skillsPaths` (`~` expanded). */
export const skillFoldersOf = (loaded: LoadedConfig): ReadonlyArray<SkillFolder> => [
  { dir: NodePath.join(loaded.paths.dir, "skills"), source: "agent", root: loaded.paths.dir },
  ...loaded.config.skillsPaths.map((entry): SkillFolder => {
    const dir = skillsFolder(entry, loaded.paths.dir, loaded.env["HOME"])
    return { dir, source: "user", root: dir }
  })
]

export interface SkillsService {
  readonly folders: ReadonlyArray<SkillFolder>
  /** Every skill, read afresh. */
  readonly catalog: Effect.Effect<SkillCatalog>
  /** The valid skill named `name`. */
  readonly skill: (name: string) => Effect.Effect<Skill, SkillError>
  /** A text file of a skill (`path` relative to its folder), through the door, confined to the skill's folder. */
  readonly file: (skill: Skill, path: string) => Effect.Effect<string, SkillError>
}

/** The agent's skills reader; stateless, so every reader (turns, read_skill, the CLI) may make its own. */
export const makeSkills = Effect.map(AgentConfig, (loaded): SkillsService => {
  const folders = skillFoldersOf(loaded)
  const catalog = Effect.sync(() => scanSkills(folders)).pipe(keptSpan("kern.skills.catalog"))
  const skill = (name: string) =>
    Effect.flatMap(catalog, ({ problems, skills }) => {
      const found = skills.find((s) => s.name === name)
      if (found !== undefined) return Effect.succeed(found)
      const bad = problems.find((p) => p.name === name)
      const known = skills.map((s) => s.name).join(", ")
      return Effect.fail(
        new SkillError({
          reason: "unknown",
          message: bad !== undefined
            ? `skill "${name}" is not valid: ${bad.error}`
            : `no skill named "${name}"; ${known === "" ? "there are no skills" : `the skills are: ${known}`}`
        })
      )
    })
  const file = (found: Skill, path: string) =>
    Effect.suspend(() => {
      const display = found.source === "agent" ? `skills/${found.name}/${path}` : NodePath.join(found.dir, path)
      const read = readSkillText(NodePath.resolve(found.dir, path), found.dir, display)
      return Either.isRight(read)
        ? Effect.succeed(read.right.text)
        : Effect.fail(new SkillError({ reason: "file", message: read.left.message }))
    }).pipe(Effect.withSpan("kern.skills.file", { attributes: { skill: found.name, path } }))
  return { folders, catalog, skill, file }
})
