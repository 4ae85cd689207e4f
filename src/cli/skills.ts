import { Console, Effect } from "effect"
import * as Layers from "../runtime/layers.js"
import { makeSkills } from "../skills/Skills.js"
import { skillText } from "../skills/readSkill.js"
import { CommandFailed } from "./errors.js"
import { table } from "./table.js"

// `kern skills …` reads the agent's skills as a turn would (src/skills), with only the config loaded: no kern.db, no
// lock, beside a running agent.

export interface SkillsListArgs {
  readonly dir: string
  readonly json: boolean
}

export interface SkillsShowArgs extends SkillsListArgs {
  readonly name: string
}

const configLayer = (dir: string) => Layers.configLayer(dir, (line) => Console.error(`kern: ${line}`))

const oneLine = (text: string, max: number) => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

/** `kern skills list`: every skill with its folder; the shadowed and the invalid ones with why. */
export const list = (args: SkillsListArgs) =>
  Effect.gen(function*() {
    const skills = yield* makeSkills
    const catalog = yield* skills.catalog
    const rows = [
      ...catalog.skills.map((s) => ({ name: s.name, description: s.description, source: s.source, folder: s.folder, state: "ok", error: null })),
      ...catalog.shadowed.map((s) => ({
        name: s.name,
        description: s.description,
        source: s.source,
        folder: s.folder,
        state: "shadowed",
        error: `shadowed by the skill of the same name in ${s.by}`
      })),
      ...catalog.problems.map((p) => ({ name: p.name, description: "", source: p.source, folder: p.folder, state: "invalid", error: p.error }))
    ]
    if (args.json) return yield* Console.log(JSON.stringify(rows))
    if (rows.length === 0) {
      return yield* Console.log(
        `no skills: add skills/<name>/SKILL.md to the agent folder, or folders of skills to skillsPaths (looked in ${
          skills.folders.map((f) => f.dir).join(", ")
        })`
      )
    }
    yield* Console.log(table(
      ["skill", "description", "source", "folder"],
      rows.map((row) => [
        row.name,
        row.error === null ? oneLine(row.description, 60) : `(${row.state}) ${row.error}`,
        row.source,
        row.folder
      ])
    ))
  }).pipe(Effect.provide(configLayer(args.dir)))

/** `kern skills show <name>`: what read_skill gives the model, its instructions and files. */
export const show = (args: SkillsShowArgs) =>
  Effect.gen(function*() {
    const skills = yield* makeSkills
    const skill = yield* skills.skill(args.name).pipe(Effect.mapError((error) => new CommandFailed({ message: error.message })))
    if (args.json) {
      return yield* Console.log(JSON.stringify({
        name: skill.name,
        description: skill.description,
        source: skill.source,
        folder: skill.folder,
        instructions: skill.body,
        text: skillText(skill)
      }))
    }
    yield* Console.log(`${skill.name} (${skill.source}: ${skill.dir})\n${skill.description}\n\n${skillText(skill)}`)
  }).pipe(Effect.provide(configLayer(args.dir)))
