// grep's byte search before decoding (src/tools/regexLiterals.ts): a file the regex matches a line of always holds one
// of the literals, on hostile patterns and bytes (multibyte and invalid UTF-8, CRLF, long lines, binary files), and
// grep answers exactly what a search of every decoded line answers.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { grep, grepMaxMatches } from "../../src/tools/grep.js"
import * as RegexGuard from "../../src/tools/regexGuard.js"
import { requiredLiterals } from "../../src/tools/regexLiterals.js"
import { matchingLines } from "../../src/tools/regexWorker.js"
import * as Workspace from "../../src/tools/Workspace.js"
import { makeWorkspace } from "./support.js"

/** Patterns that read one way and match another: optional parts, Annex B's literal braces, escapes, groups. */
const hostile = [
  "needle_[0-9]+", "TODO|FIXME", "function\\s+load", "colou?r", "colou*r", "ab{0}cd", "ab{0,3}cd", "ab{1}cd", "ab{2,}?cd",
  "a(bc)?de", "x(?:ab)*cd", "(ab|cd)+ef", "(ab|c)de", "(?:ab|cd)?", "(?<name>ab)cd\\k<name>", "(ab)\\1", "\\0ab",
  "x\\x41y", "\\x4G", "\\u0041BC", "\\u004G", "a\\u{2}b", "\\cJab", "\\c1ab", "a{,2}b", "ab]cd", "a{b", "a}b", "[]ab", "[^]ab",
  "[\\]]ab", "[ab]]cd", "\\bfoo\\b", "(?<=ab)cd", "(?<!ab)cd", "(?=abc)", "(?!ab)cd", "^abc$", "ab.cd", "\\.ts\\b",
  "é+ab", "abé", "ab😀cd", "😀+", "ab\\é", "a\\-b", "a\\/b", "\\d\\d-\\d\\d", "ab|", "|ab", "(ab|)cd", "((ab)cd|(ef))gh",
  "ab\\r", "cd\\n", "a\\tb", "ab\\scd", "\\Sab", "ab*?c", "ab+?c", "ab??c", "(ab){0}cd", "(ab){1,}cd", "(?:)ab",
  "ab(?:cd|ef)+gh", "a[bc]+d?ef", "xy{2}z", "\\{ab\\}", "\\[ab\\]", "\\(ab\\)", "\\$ab\\^", "a\\|b", "ab\\", "ab\\?c"
]

/** A repeatable random integer below `n` (mulberry32). */
const seeded = (seed: number) => (n: number): number => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) % n
}

const compiles = (pattern: string): boolean => {
  try {
    new RegExp(pattern)
    return true
  } catch {
    return false
  }
}

/** Random patterns from the pieces the parse reads, alone, quantified, grouped and alternated. */
const generated = (count: number): Array<string> => {
  const literal = ["a", "b", "c", "ab", "abc", "cd", "de", "ef", "colo", "{", "}", "]", "-", "\\.", "\\-", "\\{"]
  const other = ["é", "😀", ".", "\\d", "[ab]", "[^a]", "\\x61", "\\u0062", "^", "$", "\\b", "\\r", "\\s"]
  const atoms = [...literal, ...literal, ...other]
  const quantifiers = ["", "", "", "?", "*", "+", "{0}", "{1}", "{0,2}", "{2,}", "??", "+?"]
  const random = seeded(7)
  const sequence = (depth: number): string => {
    let out = ""
    for (let i = 0, n = 1 + random(5); i < n; i++) {
      const kind = random(depth > 1 ? 8 : 11)
      const atom = kind < 8 ? atoms[random(atoms.length)]! : `(${["", "?:", "?=", "?<=", "?<g" + depth + i + ">"][random(5)]}${disjunction(depth + 1)})`
      out += atom + quantifiers[random(quantifiers.length)]
    }
    return out
  }
  const disjunction = (depth: number): string => Array.from({ length: 1 + random(2) }, () => sequence(depth)).join("|")
  return Array.from({ length: count }, () => disjunction(0))
}

/** Lines of bytes: ASCII, multibyte and broken UTF-8, CR before the newline, NUL only in one file's tail. */
const corpus = (): Array<Buffer> => {
  const pieces = ["a", "b", "c", "ab", "abc", "cd", "é", "😀", "{", "}", "]", "-", "1", "x", "y", "de", "ef", "gh", " ", "\t", "colour", "color"]
  const broken = [Buffer.from([0xc3]), Buffer.from([0xe2, 0x82]), Buffer.from([0xff]), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from([0x80])]
  const random = seeded(11)
  return Array.from({ length: 300 }, () => {
    const parts: Array<Buffer> = []
    for (let i = 0, n = random(8); i < n; i++) {
      parts.push(random(6) === 0 ? broken[random(broken.length)]! : Buffer.from(pieces[random(pieces.length)]!, "utf8"))
    }
    if (random(4) === 0) parts.push(Buffer.from("\r"))
    return Buffer.concat(parts)
  })
}

describe("required literals", () => {
  it("reads what every match must hold", () => {
    expect(requiredLiterals(/needle_[0-9]+/)).toEqual(["needle_"])
    expect(requiredLiterals(/TODO|FIXME/)).toEqual(["TODO", "FIXME"])
    expect(requiredLiterals(/function\s+load/)).toEqual(["function"])
    expect(requiredLiterals(/colou?r/)).toEqual(["colo"])
    expect(requiredLiterals(/(ab|cd)+ef/)).toEqual(["ab", "cd"])
    expect(requiredLiterals(/x\.ts\b/)).toEqual(["x.ts"])
    expect(requiredLiterals(/a{,2}b/)).toEqual(["a{,2}b"])
    // Nothing is read where a match may lack every literal, or the parse cannot be sure of the pattern.
    for (const pattern of ["a.b", "\\d+", "x|\\w+", "(ab)?cd?", "(ab)\\1", "\\cJab", "(?=abc)", "ab|"]) {
      expect(requiredLiterals(new RegExp(pattern)), pattern).toBeUndefined()
    }
    expect(requiredLiterals(/abc/i)).toBeUndefined()
    expect(requiredLiterals(/abc/u)).toBeUndefined()
  })

  it("a line the regex matches holds one of them, on hostile patterns and bytes", () => {
    const lines = corpus()
    let read = 0
    let ruledOut = 0
    for (const pattern of [...hostile, ...generated(5000)].filter(compiles)) {
      const regex = new RegExp(pattern)
      const literals = requiredLiterals(regex)
      if (literals === undefined) continue
      read++
      const needles = literals.map((literal) => Buffer.from(literal, "latin1"))
      for (const line of lines) {
        const holds = needles.some((needle) => line.indexOf(needle) >= 0)
        const matched = matchingLines(regex, line.toString("utf8")).length > 0
        if (matched) expect(holds, `${pattern} on ${JSON.stringify(line.toString("utf8"))} (${line.toString("hex")})`).toBe(true)
        if (!holds) ruledOut++
      }
    }
    // The check is not empty: many patterns are read and many lines ruled out by them.
    expect(read).toBeGreaterThan(500)
    expect(ruledOut).toBeGreaterThan(10_000)
  })
})

describe("grep with the byte search", () => {
  const files: Record<string, Buffer> = {
    "utf8.md": Buffer.from("café colour\nnaïve color\n😀 emoji ab cd\nplain ab\n", "utf8"),
    "crlf.txt": Buffer.from("ab line one\r\ncolour two\r\n\r\nlast ab\r\n", "utf8"),
    "broken.txt": Buffer.concat([Buffer.from("ab"), Buffer.from([0xc3]), Buffer.from("cd colour\n"), Buffer.from([0xff, 0xfe]), Buffer.from("ab\n")]),
    "long.txt": Buffer.from(`${"x".repeat(5000)}colour${"y".repeat(5000)}\nab\n`, "utf8"),
    "binary.bin": Buffer.concat([Buffer.from("ab colour\n"), Buffer.from([0, 1, 2]), Buffer.from("ab\n")]),
    "late-nul.txt": Buffer.concat([Buffer.from("ab colour\n".repeat(1000)), Buffer.from([0]), Buffer.from("ab\n")]),
    "src/deep/code.ts": Buffer.from("export const needle_1 = 1\n// TODO: ab\nfunction  load() {}\n", "utf8")
  }

  /** What grep answers when every line of every file is decoded and tested: the lines, as grep prints them. */
  const expected = (root: string, regex: RegExp): Array<string> =>
    Object.keys(files).sort().flatMap((name) => {
      const bytes = NodeFs.readFileSync(NodePath.join(root, name))
      if (bytes.subarray(0, 8192).indexOf(0) >= 0) return []
      const text = bytes.toString("utf8")
      const lines = text.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line))
      return matchingLines(regex, text).map((number) => {
        const line = lines[number - 1]!
        return `${name}:${number}:${line.length > 300 ? `${line.slice(0, 300)}…` : line}`
      })
    })

  it.effect("answers as a search of every decoded line, for each pattern", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      for (const [name, bytes] of Object.entries(files)) {
        NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, name)), { recursive: true })
        NodeFs.writeFileSync(NodePath.join(root, name), bytes)
      }
      const layer = Layer.merge(Workspace.layerTest(root), RegexGuard.layer).pipe(Layer.provideMerge(NodeContext.layer))
      let matched = 0
      for (const pattern of [...hostile, "ab", "colou?r", "ab\\s*$", "^ab", "cd colour", "(?<=é )co", "ab(?=\\r?$)"].filter(compiles)) {
        const regex = new RegExp(pattern)
        const want = expected(root, regex)
        const out = yield* grep({ pattern }).pipe(Effect.provide(layer))
        expect(out.matches, pattern).toBe(want.length)
        const shown = Math.min(want.length, grepMaxMatches)
        if (shown > 0) expect(out.text.split("\n").slice(0, shown), pattern).toEqual(want.slice(0, shown))
        matched += want.length
      }
      expect(matched).toBeGreaterThan(30)
    }), 60_000)
})
