import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { readSkill } from "../../src/skills/readSkill.js"
import { attacks, leaked, makeOutside, plantSecrets, releaseFifos, slug } from "../support/linkCorpus.js"
import { writeFiles } from "../support/tempDir.js"
import { skillMd, skillsAgent, skillsOf } from "./support.js"

describe("the skills catalog", () => {
  it.effect("agent-folder skills, then skillsPaths (~ expanded); an agent skill shadows a user-wide one of its name", () =>
    Effect.gen(function*() {
      const { dir, home } = skillsAgent(
        {
          "skills/pdf-forms/SKILL.md": skillMd("pdf-forms", "Fill PDF forms (agent)."),
          "skills/pdf-forms/scripts/fill.py": "print('fill')\n",
          "skills/README.md": "not a skill: a file beside the skill folders",
          "skills/.git/SKILL.md": "hidden folders are not skills"
        },
        { skillsPaths: ["~/skills", "~/missing"] }
      )
      writeFiles(NodePath.join(home, "skills"), {
        "pdf-forms/SKILL.md": skillMd("pdf-forms", "Fill PDF forms (user-wide)."),
        "release-notes/SKILL.md": skillMd("release-notes", "Write release notes from git log.")
      })
      const skills = yield* skillsOf(dir, home)
      expect(skills.folders.map((f) => [f.source, f.dir])).toEqual([
        ["agent", NodePath.join(dir, "skills")],
        ["user", NodePath.join(home, "skills")],
        ["user", NodePath.join(home, "missing")]
      ])
      const catalog = yield* skills.catalog
      expect(catalog.skills.map((s) => [s.name, s.description, s.source])).toEqual([
        ["pdf-forms", "Fill PDF forms (agent).", "agent"],
        ["release-notes", "Write release notes from git log.", "user"]
      ])
      expect(catalog.shadowed.map((s) => [s.name, s.description, s.by])).toEqual([
        ["pdf-forms", "Fill PDF forms (user-wide).", NodePath.join(dir, "skills")]
      ])
      // A folder of skills that does not exist is simply empty.
      expect(catalog.problems).toEqual([])
    }))

  it.effect("a folder of skills that is a file, under a file, or a dangling link: as readdir says (the missing-folder shortcut)", () =>
    Effect.gen(function*() {
      const { dir, home } = skillsAgent({}, { skillsPaths: ["~/plain.txt", "~/plain.txt/skills", "~/dangling"] })
      writeFiles(home, { "plain.txt": "a file\n" })
      NodeFs.symlinkSync(NodePath.join(home, "nowhere"), NodePath.join(home, "dangling"))
      const catalog = yield* Effect.flatMap(skillsOf(dir, home), (s) => s.catalog)
      expect(catalog.skills).toEqual([])
      expect(catalog.problems.map((p) => p.error)).toEqual([
        `${NodePath.join(home, "plain.txt")} is not a folder`,
        `${NodePath.join(home, "plain.txt", "skills")} is not a folder`
      ])
    }))

  it.effect("a bad skill is listed with its error and never hides the good ones", () =>
    Effect.gen(function*() {
      const { dir, home } = skillsAgent({
        "skills/good/SKILL.md": skillMd("good", "A good skill."),
        "skills/no-file/notes.md": "no SKILL.md here",
        "skills/Bad-Name/SKILL.md": skillMd("Bad-Name", "x"),
        "skills/mismatch/SKILL.md": skillMd("other", "x"),
        "skills/no-description/SKILL.md": "---\nname: no-description\n---\n",
        "skills/broken-yaml/SKILL.md": "---\nname: [broken\n---\n"
      })
      const catalog = yield* Effect.flatMap(skillsOf(dir, home), (s) => s.catalog)
      expect(catalog.skills.map((s) => s.name)).toEqual(["good"])
      const problems = Object.fromEntries(catalog.problems.map((p) => [p.name, p.error]))
      expect(Object.keys(problems).sort()).toEqual(["Bad-Name", "broken-yaml", "mismatch", "no-description", "no-file"])
      expect(problems["no-file"]).toBe("no SKILL.md in skills/no-file")
      expect(problems["Bad-Name"]).toContain("lowercase letters")
      expect(problems["mismatch"]).toContain("does not match its folder")
      expect(problems["no-description"]).toContain("no description")
      expect(problems["broken-yaml"]).toContain("not valid YAML")
    }))

  it.effect("hostile skill folders: links out of the folder or into .kern/, hard links, FIFOs, devices, huge and binary files are refused, nothing leaks", () =>
    Effect.gen(function*() {
      const { dir, home } = skillsAgent({ "skills/good/SKILL.md": skillMd("good", "A good skill.") })
      const outside = makeOutside()
      plantSecrets(dir)
      // Whatever a link leads to would pass the front matter check: only the door stops it.
      NodeFs.writeFileSync(NodePath.join(outside, "SKILL.md"), skillMd("symlinked-folder-outside", "outside", "SECRET-OUTSIDE-SKILL"))
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", "SKILL.md"), skillMd("symlinked-folder-into-kern-", "kern", "SECRET-KERN-SKILL"))
      const planted: Array<string> = []
      for (const attack of attacks) {
        const name = slug(attack)
        const target = attack.file ? NodePath.join(dir, "skills", name, "SKILL.md") : NodePath.join(dir, "skills", name)
        if (attack.plant(dir, outside, target)) planted.push(name)
      }
      writeFiles(dir, { "skills/too-big/SKILL.md": skillMd("too-big", "big", "x".repeat(300 * 1024)) })
      NodeFs.mkdirSync(NodePath.join(dir, "skills", "binary"))
      NodeFs.writeFileSync(NodePath.join(dir, "skills", "binary", "SKILL.md"), Buffer.concat([Buffer.from(skillMd("binary", "bin")), Buffer.from([0, 1, 2, 0])]))
      NodeFs.mkdirSync(NodePath.join(dir, "skills", "latin1"))
      NodeFs.writeFileSync(NodePath.join(dir, "skills", "latin1", "SKILL.md"), Buffer.concat([Buffer.from(skillMd("latin1", "caf")), Buffer.from([0xe9, 0x0a])]))
      NodeFs.symlinkSync(outside, NodePath.join(dir, "skills", "good", "outside-link"))
      const skills = yield* skillsOf(dir, home)
      const catalog = yield* skills.catalog.pipe(Effect.ensuring(Effect.sync(() => releaseFifos(dir))))
      expect(catalog.skills.map((s) => s.name)).toEqual(["good"])
      const refused = new Set(catalog.problems.map((p) => p.name))
      for (const name of [...planted, "too-big", "binary", "latin1"]) expect(refused, name).toContain(name)
      const problems = Object.fromEntries(catalog.problems.map((p) => [p.name, p.error]))
      expect(problems["too-big"]).toContain("over 256 KB")
      expect(problems["binary"]).toContain("binary")
      expect(problems["latin1"]).toContain("not UTF-8")
      const all = JSON.stringify(catalog)
      expect(leaked(all)).toEqual([])
      expect(all).not.toContain("SECRET-OUTSIDE-SKILL")
      expect(all).not.toContain("SECRET-KERN-SKILL")

      // read_skill lists a link without following it, and reads no file out of the skill's folder.
      const read = readSkill(skills)
      const shown = yield* read({ name: "good" })
      expect(shown.text).toContain("outside-link (symbolic link, not followed)")
      expect(leaked(shown.text)).toEqual([])
      NodeFs.symlinkSync(NodePath.join(dir, ".kern", ".env"), NodePath.join(dir, "skills", "good", "env.md"))
      NodeFs.linkSync(NodePath.join(dir, ".kern", ".env"), NodePath.join(dir, "skills", "good", "hard.md"))
      for (const file of ["env.md", "hard.md", "outside-link/key.md", "../../.kern/.env", "../../.kern/memo.md", NodePath.join(outside, "key.md"), "/dev/zero", "../"]) {
        const result = yield* Effect.either(read({ name: "good", file }))
        expect(Either.isLeft(result), file).toBe(true)
        if (Either.isLeft(result)) {
          expect(result.left.code, file).toBe("PERMISSION_DENIED")
          expect(leaked(result.left.message), file).toEqual([])
        }
      }
    }))

  it.effect("read_skill: the instructions and the skill's files (relative paths, sizes); one file on request; an unknown name lists the skills", () =>
    Effect.gen(function*() {
      const { dir, home } = skillsAgent({
        "skills/pdf-forms/SKILL.md": skillMd("pdf-forms", "Fill PDF forms.", "# Fill\nRun scripts/fill.py with the form."),
        "skills/pdf-forms/scripts/fill.py": "print('fill')\n",
        "skills/pdf-forms/reference/fields.md": "# Fields\nname, date\n",
        "skills/broken/SKILL.md": "no front matter"
      })
      const read = readSkill(yield* skillsOf(dir, home))
      const shown = yield* read({ name: "pdf-forms" })
      expect(shown.text).toContain("# Fill\nRun scripts/fill.py with the form.")
      expect(shown.text).not.toContain("description:")
      expect(shown.text).toContain("skills/pdf-forms/")
      expect(shown.text).toContain("- reference/fields.md (20 B)")
      expect(shown.text).toContain("- scripts/fill.py (14 B)")
      expect((yield* read({ name: "pdf-forms", file: "reference/fields.md" })).text).toBe("# Fields\nname, date\n")
      const unknown = yield* Effect.flip(read({ name: "nope" }))
      expect(unknown.code).toBe("NOT_FOUND")
      expect(unknown.message).toBe("no skill named \"nope\"; the skills are: pdf-forms")
      const broken = yield* Effect.flip(read({ name: "broken" }))
      expect(broken.message).toContain("skill \"broken\" is not valid: skills/broken/SKILL.md: SKILL.md has no front matter")
    }))
})
