import { Schema } from "effect"

/** `skillsPaths`: user-wide folders of skills (each holding `<name>/SKILL.md`), after the agent folder's `skills/`. */
export const SkillsPaths = Schema.Array(Schema.String.pipe(Schema.minLength(1)))

export const skillsPathsExpectation = "an array of folder paths holding skills (\"~/…\" is your home folder), e.g. [\"~/.kern/skills\"]"
