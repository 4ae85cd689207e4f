import { describe, expect, it } from "@effect/vitest"
import { parseDotenv } from "../../src/config/dotenv.js"

describe("parseDotenv", () => {
  it.each([
    ["a quoted value with a trailing comment", "KEY=\"abc\" # comment", { KEY: "abc" }],
    ["a single-quoted value keeps #", "KEY='a # b'", { KEY: "a # b" }],
    ["an unquoted value with a comment", "KEY=plain # note", { KEY: "plain" }],
    ["export", "export KEY=x", { KEY: "x" }],
    ["\\n in double quotes", "KEY=\"one\\ntwo\"", { KEY: "one\ntwo" }],
    ["a multi-line double-quoted value", "KEY=\"-----BEGIN KEY-----\nabc\n-----END KEY-----\"\nNEXT=1", {
      KEY: "-----BEGIN KEY-----\nabc\n-----END KEY-----",
      NEXT: "1"
    }],
    ["a multi-line single-quoted value", "KEY='a\nb'", { KEY: "a\nb" }],
    ["CRLF line ends", "A=x\r\nB=y\r\n", { A: "x", B: "y" }],
    ["spaces around =", "A = spaced ", { A: "spaced" }],
    ["an empty value", "A=", { A: "" }],
    ["the last assignment wins", "A=1\nA=2", { A: "2" }]
  ])("%s", (_name, text, values) => {
    const parsed = parseDotenv(text)
    expect(parsed.values).toEqual(values)
    expect(parsed.problems).toEqual([])
  })

  it("reports a broken line and does not glue it onto the next key", () => {
    const parsed = parseDotenv("A=1\nthis line is broken\nB=2\n1BAD=3")
    expect(parsed.values).toEqual({ A: "1", B: "2" })
    expect(parsed.problems).toEqual([
      "line 2 is not KEY=VALUE and was ignored",
      "line 4 is not KEY=VALUE and was ignored"
    ])
  })

  it("a # line inside a multi-line value is part of the value", () => {
    const parsed = parseDotenv("A=\"x\n# not a comment\ny\"")
    expect(parsed.values).toEqual({ A: "x\n# not a comment\ny" })
  })

  it("reports a quote that is never closed", () => {
    const parsed = parseDotenv("A=\"open\nB=2")
    expect(parsed.problems).toEqual(["a value opened with \" is never closed"])
  })
})
