import { Effect, Layer, Schema } from "effect"
import { scopeTag } from "../kernel/toolScope.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { formatBytes } from "../tools/textFile.js"
import type { Skill } from "./catalog.js"
import { makeSkills, type SkillError, skillEntries, type SkillsService } from "./Skills.js"

/** The tool's id (and the name the model calls it by). */
export const readSkillToolId = "read_skill"

export const ReadSkillArgs = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "the skill's name, as the system prompt lists it" }),
  file: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "a file of the skill to read instead of its instructions (a path its file list gives)"
  }))
})
export type ReadSkillArgs = typeof ReadSkillArgs.Type

const description = "Load one of the skills the system prompt lists: { name } gives its instructions and the files beside them " +
  "(relative paths and sizes); { name, file } reads one of those files. Follow the instructions; read references " +
  "with read and run scripts with bash as they say."

const failure = (error: SkillError) => toolFailure(error.reason === "unknown" ? "NOT_FOUND" : "PERMISSION_DENIED", error.message)

/** Where the model finds a skill's files with `read`: the agent folder's relative path, else read_skill's `file`. */
const whereFiles = (skill: Skill) =>
  skill.source === "agent"
    ? `Its files are in skills/${skill.name}/ (read them with read, or with read_skill's file).`
    : `Its files are in ${skill.dir}, outside the agent folder: read them with read_skill { name: "${skill.name}", file }.`

/** A skill's instructions and its file list, as the model reads them. */
export const skillText = (skill: Skill): string => {
  const { files, more } = skillEntries(skill.dir)
  const listing = files.length === 0
    ? "No other files."
    : [
      whereFiles(skill),
      ...files.map((file) => `- ${file.path} (${file.link ? "symbolic link, not followed" : formatBytes(file.size)})`),
      ...(more > 0 ? [`- … and ${more} more`] : [])
    ].join("\n")
  return `# Skill ${skill.name}\n\n${skill.body === "" ? "(SKILL.md has no instructions after its front matter.)" : skill.body}\n\n## Files\n${listing}`
}

/** read_skill({ name, file? }). */
export const readSkill = (skills: SkillsService) =>
  Effect.fn("kern.tools.readSkill")(function*(args: ReadSkillArgs) {
    const skill = yield* skills.skill(args.name).pipe(Effect.mapError(failure))
    if (args.file === undefined) return { name: skill.name, source: skill.source, text: skillText(skill) }
    const text = yield* skills.file(skill, args.file).pipe(Effect.mapError(failure))
    return { name: skill.name, file: args.file, text }
  })

/** Registers read_skill; turns offer it only while a valid skill exists (src/turn/offeredTools.ts). */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const registry = yield* ToolRegistry
  const skills = yield* makeSkills
  yield* registry.register({
    toolId: readSkillToolId,
    name: "Read skill",
    description,
    safetyClass: "READ_ONLY",
    idempotent: true,
    timeoutMs: 10_000,
    sideEffectLevel: "none",
    riskTags: [scopeTag("read")]
  }, { parameters: ReadSkillArgs, handler: readSkill(skills) })
}))
