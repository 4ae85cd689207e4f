import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { parseSkillFile } from "../../src/skills/frontMatter.js"

const parsed = (text: string, folder = "pdf-forms") => parseSkillFile(text, folder)

const error = (text: string, folder = "pdf-forms") => {
  const result = parsed(text, folder)
  return Either.isLeft(result) ? result.left : "(valid)"
}

describe("SKILL.md front matter (Agent Skills rules)", () => {
  it("takes name, description and the instructions after the front matter; YAML as YAML (quotes, folded text, CRLF, a BOM)", () => {
    expect(parsed("---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\n# Steps\n1. open\n")).toEqual(
      Either.right({ name: "pdf-forms", description: "Fill PDF forms.", body: "# Steps\n1. open" })
    )
    const folded = "\uFEFF---\r\nname: 'pdf-forms'\r\ndescription: >\r\n  Fill PDF forms:\r\n  text fields and checkboxes.\r\nlicense: MIT\r\nmetadata:\r\n  version: 1\r\n---\r\nBody\r\n"
    expect(parsed(folded)).toEqual(Either.right({ name: "pdf-forms", description: "Fill PDF forms: text fields and checkboxes.", body: "Body" }))
    expect(parsed("---\nname: pdf-forms\ndescription: \"a: b # not a comment\"\n---\n")).toEqual(
      Either.right({ name: "pdf-forms", description: "a: b # not a comment", body: "" })
    )
  })

  it("names what is wrong with a bad one", () => {
    expect(error("# no front matter\n")).toContain("no front matter")
    expect(error("---\nname: [unclosed\n---\n")).toContain("not valid YAML")
    expect(error("---\n- a\n- b\n---\n")).toContain("must be a YAML mapping")
    expect(error("---\ndescription: x\n---\n")).toContain("no name:")
    expect(error("---\nname: 12\ndescription: x\n---\n")).toContain("no name:")
    expect(error("---\nname: PDF-Forms\ndescription: x\n---\n", "PDF-Forms")).toContain("lowercase letters, digits and hyphens")
    expect(error("---\nname: pdf_forms\ndescription: x\n---\n", "pdf_forms")).toContain("lowercase letters, digits and hyphens")
    expect(error("---\nname: -pdf\ndescription: x\n---\n", "-pdf")).toContain("start or end with a hyphen")
    expect(error("---\nname: pdf--forms\ndescription: x\n---\n", "pdf--forms")).toContain("two hyphens")
    const long = "a".repeat(65)
    expect(error(`---\nname: ${long}\ndescription: x\n---\n`, long)).toContain("65 characters, over 64")
    expect(error("---\nname: other\ndescription: x\n---\n")).toContain("does not match its folder \"pdf-forms\"")
    expect(error("---\nname: pdf-forms\n---\n")).toContain("no description:")
    expect(error("---\nname: pdf-forms\ndescription: \"  \"\n---\n")).toContain("no description:")
    expect(error(`---\nname: pdf-forms\ndescription: ${"d".repeat(1025)}\n---\n`)).toContain("1025 characters, over 1024")
    expect(Either.isRight(parsed(`---\nname: pdf-forms\ndescription: ${"d".repeat(1024)}\n---\n`))).toBe(true)
  })

  it("an alias bomb in the front matter is an error, not a hang", () => {
    const bomb = ["---", "a: &a [x, x, x, x, x, x, x, x, x]", "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]", "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]", "name: pdf-forms", "description: x", "---", ""].join("\n")
    expect(error(bomb)).toContain("not valid YAML")
  })
})
