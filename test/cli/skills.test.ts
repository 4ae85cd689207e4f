import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { runKernIn } from "../support/inProcessCli.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { skillMd } from "../skills/support.js"

const agentWithSkills = () => {
  const root = makeTempDir("kern-cli-skills-")
  const dir = NodePath.join(root, "agent")
  const home = NodePath.join(root, "home")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ skillsPaths: ["~/skills"] }),
    "skills/pdf-forms/SKILL.md": skillMd("pdf-forms", "Fill PDF forms.", "# Fill\nRun scripts/fill.py."),
    "skills/pdf-forms/scripts/fill.py": "print('fill')\n",
    "skills/Bad/SKILL.md": skillMd("Bad", "x")
  })
  writeFiles(home, {
    "skills/pdf-forms/SKILL.md": skillMd("pdf-forms", "User-wide PDF forms."),
    "skills/release-notes/SKILL.md": skillMd("release-notes", "Write release notes.")
  })
  return { dir, home }
}

describe("kern skills", () => {
  it("list: each skill with its source folder; the shadowed one and the invalid one with why", async () => {
    const { dir, home } = agentWithSkills()
    const listed = await runKernIn(["skills", "list", dir], { env: { HOME: home } })
    expect(listed.stderr).toBe("")
    expect(listed.status).toBe(0)
    expect(listed.stdout).toMatch(/pdf-forms\s+Fill PDF forms\.\s+agent\s+\S+agent\/skills/)
    expect(listed.stdout).toMatch(/release-notes\s+Write release notes\.\s+user\s+\S+home\/skills/)
    expect(listed.stdout).toContain(`(shadowed) shadowed by the skill of the same name in ${NodePath.join(dir, "skills")}`)
    expect(listed.stdout).toMatch(/Bad\s+\(invalid\) skills\/Bad\/SKILL\.md: name "Bad" may hold only lowercase letters/)
    const json = JSON.parse((await runKernIn(["skills", "list", "--json", "--dir", dir], { env: { HOME: home } })).stdout)
    expect(json.map((row: { name: string; state: string; source: string }) => [row.name, row.state, row.source])).toEqual([
      ["pdf-forms", "ok", "agent"],
      ["release-notes", "ok", "user"],
      ["pdf-forms", "shadowed", "user"],
      ["Bad", "invalid", "agent"]
    ])
  })

  it("list with no skills says where it looked", async () => {
    const dir = NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, { ".kern/config.json": "{}" })
    const listed = await runKernIn(["skills", "list", dir])
    expect(listed.status).toBe(0)
    expect(listed.stdout).toContain(`no skills: add skills/<name>/SKILL.md to the agent folder`)
    expect(listed.stdout).toContain(NodePath.join(dir, "skills"))
  })

  it("show: the instructions and files; an unknown or invalid skill is exit 1 with why, not a stack trace", async () => {
    const { dir, home } = agentWithSkills()
    const shown = await runKernIn(["skills", "show", "pdf-forms", dir], { env: { HOME: home } })
    expect(shown.status).toBe(0)
    expect(shown.stdout).toContain("Fill PDF forms.")
    expect(shown.stdout).toContain("# Fill\nRun scripts/fill.py.")
    expect(shown.stdout).toContain("- scripts/fill.py (14 B)")
    const unknown = await runKernIn(["skills", "show", "nope", dir], { env: { HOME: home } })
    expect(unknown.status).toBe(1)
    expect(unknown.stderr.trim()).toBe("kern: no skill named \"nope\"; the skills are: pdf-forms, release-notes")
    const bad = await runKernIn(["skills", "show", "Bad", dir], { env: { HOME: home } })
    expect(bad.status).toBe(1)
    expect(bad.stderr).toContain("skill \"Bad\" is not valid")
    expect(bad.stderr).not.toContain("    at ")
    expect(NodeFs.existsSync(NodePath.join(dir, ".kern", "kern.db"))).toBe(false)
  })

  it("a bad skillsPaths is a config error naming the key", async () => {
    const dir = NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, { ".kern/config.json": JSON.stringify({ skillsPaths: "~/skills" }) })
    const listed = await runKernIn(["skills", "list", dir])
    expect(listed.status).toBe(2)
    expect(listed.stderr).toContain("skillsPaths")
  })
})
