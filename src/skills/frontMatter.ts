import { Either } from "effect"
import { parse } from "yaml"

/** The longest skill name the Agent Skills format allows. */
export const maxNameChars = 64

/** The longest description the Agent Skills format allows. */
export const maxDescriptionChars = 1024

/** What a valid SKILL.md holds: its front matter's name and description, and the instructions after it. */
export interface SkillFile {
  readonly name: string
  readonly description: string
  /** The instructions: the text after the front matter, trimmed. */
  readonly body: string
}

const fence = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

/** Why `name` is not a skill name (Agent Skills rules), or undefined when it is one. */
export const nameProblem = (name: string): string | undefined => {
  if (name.length === 0) return "name is empty"
  if (name.length > maxNameChars) return `name is ${name.length} characters, over ${maxNameChars}`
  if (!/^[a-z0-9-]+$/.test(name)) return `name "${name}" may hold only lowercase letters, digits and hyphens`
  if (name.startsWith("-") || name.endsWith("-")) return `name "${name}" may not start or end with a hyphen`
  if (name.includes("--")) return `name "${name}" may not hold two hyphens in a row`
  return undefined
}

const describeYamlError = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "invalid YAML"

/**
 * Parses a SKILL.md of the folder `folder`: YAML front matter between `---` lines (parsed by a real YAML parser),
 * with `name` (the folder's name, Agent Skills rules) and a non-empty `description` of at most 1024 characters,
 * then the instructions. Left: what is wrong, in words a skill's author can act on.
 */
export const parseSkillFile = (text: string, folder: string): Either.Either<SkillFile, string> => {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text
  const match = fence.exec(source)
  if (match === null) {
    return Either.left("SKILL.md has no front matter: it must start with a line \"---\", then name: and description:, then \"---\"")
  }
  let data: unknown
  try {
    // The yaml package reports bad YAML by throwing; here, at the edge, it becomes the skill's error.
    data = parse(match[1] ?? "", { maxAliasCount: 100 })
  } catch (error) {
    return Either.left(`SKILL.md's front matter is not valid YAML: ${describeYamlError(error)}`)
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return Either.left("SKILL.md's front matter must be a YAML mapping with name: and description:")
  }
  const name = "name" in data ? data.name : undefined
  const description = "description" in data ? data.description : undefined
  if (typeof name !== "string") return Either.left("SKILL.md's front matter has no name: (a string)")
  const bad = nameProblem(name)
  if (bad !== undefined) return Either.left(bad)
  if (name !== folder) return Either.left(`name "${name}" does not match its folder "${folder}"; they must be the same`)
  if (typeof description !== "string" || description.trim() === "") {
    return Either.left("SKILL.md's front matter has no description: (a non-empty string saying what the skill does and when to use it)")
  }
  if (description.length > maxDescriptionChars) {
    return Either.left(`description is ${description.length} characters, over ${maxDescriptionChars}`)
  }
  return Either.right({ name, description: description.trim(), body: source.slice(match[0].length).trim() })
}
