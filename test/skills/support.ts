import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { makeSkills } from "../../src/skills/Skills.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

/** A SKILL.md with the given front matter fields and instructions. */
export const skillMd = (name: string, description: string, body = `Do ${name} step by step.`) =>
  `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n${body}\n`

/** An agent folder (config and files) and its home folder. */
export const skillsAgent = (files: Readonly<Record<string, string>> = {}, config: Record<string, unknown> = {}) => {
  const root = makeTempDir("kern-skills-")
  const dir = NodePath.join(root, "agent")
  const home = NodePath.join(root, "home")
  NodeFs.mkdirSync(home, { recursive: true })
  writeFiles(dir, { ".kern/config.json": JSON.stringify(config), ...files })
  return { dir, home }
}

/** The agent's skills reader, its config loaded with HOME at `home`. */
export const skillsOf = (dir: string, home: string) =>
  makeSkills.pipe(
    Effect.provide(AgentConfig.layer(dir)),
    Effect.provide(Layer.succeed(ProcessEnv, { HOME: home })),
    Effect.provide(NodeContext.layer)
  )
