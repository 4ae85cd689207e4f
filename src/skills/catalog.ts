import { Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { PromptSkill } from "../context/systemPrompt.js"
import { type AgentFileBytes, type AgentFileError, readAgentFileSync } from "../storage/agentFiles.js"
import { binaryKind, isBinary } from "../tools/textFile.js"
import { parseSkillFile } from "./frontMatter.js"

/** Where a skill comes from: the agent folder's `skills/`, or a user-wide folder of `skillsPaths`. */
export type SkillSource = "agent" | "user"

/** A folder of skills (each `<name>/SKILL.md` in it). */
export interface SkillFolder {
  readonly dir: string
  readonly source: SkillSource
  /** The folders the door lets files be read from: the agent folder for its own skills, else the folder itself. */
  readonly root: string
}

export interface Skill {
  readonly name: string
  readonly description: string
  /** The instructions after the front matter. */
  readonly body: string
  readonly source: SkillSource
  /** The folder of skills it is in. */
  readonly folder: string
  /** Its own folder's real path (where SKILL.md really is). */
  readonly dir: string
}

/** A skill folder that is not a valid skill, or a folder of skills that cannot be listed: with why. */
export interface SkillProblem {
  /** The skill's folder name, or the folder of skills itself when that cannot be listed. */
  readonly name: string
  readonly source: SkillSource
  readonly folder: string
  readonly error: string
}

export interface SkillCatalog {
  /** The valid skills, by name, each name once: the agent folder's before a user-wide one. */
  readonly skills: ReadonlyArray<Skill>
  /** Valid skills another of the same name shadows, with the folder of the one used. */
  readonly shadowed: ReadonlyArray<Skill & { readonly by: string }>
  readonly problems: ReadonlyArray<SkillProblem>
}

/** The largest SKILL.md (or file read through read_skill) kern reads: instructions, not data. */
export const skillFileMaxBytes = 256 * 1024

/** Skill folders looked at in one folder of skills; more are listed as one problem. */
export const maxSkillsPerFolder = 200

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * A skill's text file through the agent's door (src/storage/agentFiles.ts: no link out of `root`, no hard link, no
 * FIFO or device, nothing under `.kern/`, at most skillFileMaxBytes), and only text: no NUL bytes, valid UTF-8.
 */
export const readSkillText = (
  path: string,
  root: string,
  display: string
): Either.Either<{ readonly text: string; readonly file: AgentFileBytes }, { readonly missing: boolean; readonly message: string }> => {
  const read: Either.Either<AgentFileBytes, AgentFileError> = readAgentFileSync(path, { roots: [root], maxBytes: skillFileMaxBytes, display })
  if (Either.isLeft(read)) return Either.left({ missing: read.left.reason === "missing", message: read.left.message })
  const file = read.right
  const refuse = (message: string) => Either.left({ missing: false, message })
  if (isBinary(file.bytes)) return refuse(`${display} is binary (${binaryKind(file.bytes)}), not text; kern reads only text skill files`)
  try {
    return Either.right({ text: utf8.decode(file.bytes), file })
  } catch {
    return refuse(`${display} is not UTF-8 text; kern reads only UTF-8 skill files`)
  }
}

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/** Whether `dir` is not there (stat says so without throwing); an error is not an answer. */
const absent = (dir: string): boolean => {
  try {
    return NodeFs.statSync(dir, { throwIfNoEntry: false }) === undefined
  } catch {
    return false
  }
}

/** The candidate skill folders of a folder of skills, sorted; a missing folder has none. */
const listFolder = (folder: SkillFolder): Either.Either<ReadonlyArray<string>, string> => {
  // A folder that is not there (most agents have no skills) is looked at without an error made and thrown every turn.
  // (Any other answer, an error included, is left to readdir, whose error is the one reported.)
  if (absent(folder.dir)) return Either.right([])
  try {
    const entries = NodeFs.readdirSync(folder.dir, { withFileTypes: true })
    return Either.right(
      entries.filter((entry) => !entry.name.startsWith(".") && (entry.isDirectory() || entry.isSymbolicLink()))
        .map((entry) => entry.name)
        .sort()
    )
  } catch (error) {
    const code = codeOf(error)
    if (code === "ENOENT") return Either.right([])
    if (code === "ENOTDIR") return Either.left(`${folder.dir} is not a folder`)
    return Either.left(`${folder.dir} cannot be listed: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** One skill folder read and checked: the skill, or why it is not one. */
const readSkill = (folder: SkillFolder, name: string): Either.Either<Skill, SkillProblem> => {
  const problem = (error: string): SkillProblem => ({ name, source: folder.source, folder: folder.dir, error })
  const path = NodePath.join(folder.dir, name, "SKILL.md")
  const display = folder.source === "agent" ? `skills/${name}/SKILL.md` : path
  return readSkillText(path, folder.root, display).pipe(
    Either.mapLeft((error) => problem(error.missing ? `no SKILL.md in ${NodePath.dirname(display)}` : error.message)),
    Either.flatMap(({ file, text }) =>
      parseSkillFile(text, name).pipe(
        Either.mapLeft((error) => problem(`${display}: ${error}`)),
        Either.map((parsed): Skill => ({ ...parsed, source: folder.source, folder: folder.dir, dir: NodePath.dirname(file.path) }))
      )
    )
  )
}

/**
 * Every skill of `folders`, the first folder's first: read afresh on every call (a changed, added or removed skill
 * counts from the next message on). A bad skill or folder is a problem in the catalog, never a failure.
 */
export const scanSkills = (folders: ReadonlyArray<SkillFolder>): SkillCatalog => {
  const skills = new Map<string, Skill>()
  const shadowed: Array<Skill & { readonly by: string }> = []
  const problems: Array<SkillProblem> = []
  for (const folder of folders) {
    const listed = listFolder(folder)
    if (Either.isLeft(listed)) {
      problems.push({ name: folder.dir, source: folder.source, folder: folder.dir, error: listed.left })
      continue
    }
    const names = listed.right
    if (names.length > maxSkillsPerFolder) {
      problems.push({
        name: folder.dir,
        source: folder.source,
        folder: folder.dir,
        error: `${names.length} skill folders, over ${maxSkillsPerFolder}: only the first ${maxSkillsPerFolder} (by name) are read`
      })
    }
    for (const name of names.slice(0, maxSkillsPerFolder)) {
      const read = readSkill(folder, name)
      if (Either.isLeft(read)) {
        problems.push(read.left)
        continue
      }
      const first = skills.get(name)
      if (first === undefined) skills.set(name, read.right)
      else shadowed.push({ ...read.right, by: first.folder })
    }
  }
  return { skills: [...skills.values()].sort((a, b) => a.name.localeCompare(b.name)), shadowed, problems }
}

/** The valid skills as the system prompt lists them: name and description only. */
export const promptSkillsOf = (catalog: SkillCatalog): ReadonlyArray<PromptSkill> =>
  catalog.skills.map(({ description, name }) => ({ name, description }))
