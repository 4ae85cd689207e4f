import { assert, describe, it } from "@effect/vitest"
import {
  type CompactionOptions,
  compactText,
  defaultCompactionOptions,
  isImportantLine
} from "../../src/tools/compaction.js"

/**
 * The compactor as first written (split into lines, every middle line tested by isImportantLine, context and budget
 * line by line): obviously right and slow. The shipped one scans the whole text once; it must give the same text.
 */
const referenceBlock = (lines: ReadonlyArray<string>, options: CompactionOptions): Array<string> => {
  const cut = (line: string) =>
    line.length > options.maxLineChars
      ? `${line.slice(0, options.maxLineChars)}… [${line.length - options.maxLineChars} chars cut]`
      : line
  const omitted = (count: number) => `[... ${count} line${count === 1 ? "" : "s"} omitted ...]`
  const total = lines.length
  if (total <= options.headLines + options.tailLines) return lines.map(cut)
  const keep = new Uint8Array(total)
  for (let i = 0; i < options.headLines; i++) keep[i] = 1
  for (let i = total - options.tailLines; i < total; i++) keep[i] = 1
  let budget = options.matchBudgetBytes
  let skipped = 0
  for (let i = options.headLines; i < total - options.tailLines; i++) {
    if (!isImportantLine(lines[i]!)) continue
    const from = Math.max(0, i - options.contextLines)
    const to = Math.min(total - 1, i + options.contextLines)
    let cost = 0
    for (let j = from; j <= to; j++) if (keep[j] === 0) cost += Math.min(lines[j]!.length, options.maxLineChars) + 1
    if (cost > budget) {
      skipped++
      continue
    }
    budget -= cost
    for (let j = from; j <= to; j++) keep[j] = 1
  }
  const out: Array<string> = []
  let gap = 0
  for (let i = 0; i < total; i++) {
    if (keep[i] === 1) {
      if (gap > 0) out.push(omitted(gap))
      gap = 0
      out.push(cut(lines[i]!))
    } else gap++
  }
  if (gap > 0) out.push(omitted(gap))
  if (skipped > 0) out.push(`[... ${skipped} more matching lines omitted: over the budget ...]`)
  return out
}

const referenceText = (text: string, sectioned: boolean, options: CompactionOptions): string => {
  const lines = text.split("\n")
  if (!sectioned) return referenceBlock(lines, options).join("\n")
  const isHeader = (line: string) => line === "STDOUT:" || line === "STDERR:"
  const out: Array<string> = []
  let start = 0
  for (let i = 0; i <= lines.length; i++) {
    if (i === lines.length || (i > start && isHeader(lines[i]!))) {
      const section = lines.slice(start, i)
      const header = section.length > 0 && isHeader(section[0]!)
      if (header) out.push(section[0]!)
      out.push(...referenceBlock(header ? section.slice(1) : section, options))
      start = i
    }
  }
  return out.join("\n")
}

/** A seeded generator (mulberry32): the same corpus every run, so a failure reproduces. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Words and pieces a line is made of: every pattern's words and their near misses, in any case, with symbols. */
const pieces = [
  "error", "Errors", "ERR!", "errand", "terror", "exception", "exc", "Traceback", "trace", "panicked", "panic", "fatal",
  "fatality", "segmentation fault", "segment", "E0502", "e999", "E12", "fail", "FAILED", "failures", "failing", "broken",
  "brokers", "abort", "aborted", "abo", "✗", "✘", "✓", "warn", "WARNING", "warnings", "warned", "3 passed", "12\tfailed",
  "1 skipped", "4 pending", "2 specs", "7 tests", "9 errors", "5passed", "Tests:", "Test Files", "Suites:", "Suite",
  "PASS", "pass", "ok", "not ok", "okay", "note", "src/a.ts:12:5", "a:1:", ":3:", "x:", ":", "1:", "STDOUT:", "STDERR:",
  "the", "compiling", "chunk", "bundle", "-", "(", ")", "[", "]", "_", "__init__", "é", "日本語", "🎉", "\u2028", "\u2029",
  "\r", "\t", " ", "  ", "\u00a0", "\u0000", "\u001b[31m", "\u001b[0m", "\ufffd", "ſ", "K", "sk-live-1234567890abcdef",
  "AKIA0123456789ABCDEF", "password=hunter2"
]

const lineOf = (next: () => number): string => {
  const kind = next()
  if (kind < 0.02) return ""
  if (kind < 0.03) return "x".repeat(300 + Math.floor(next() * 2_000)) // a long line, cut
  if (kind < 0.05) {
    // Binary-ish: control characters and lone surrogates among bytes.
    return Array.from({ length: 1 + Math.floor(next() * 80) }, () => String.fromCharCode(Math.floor(next() * 0xe000)))
      .join("")
      .replaceAll("\n", " ")
  }
  if (kind < 0.75) return `plain line ${Math.floor(next() * 1e6)} of the log`
  const words = Array.from({ length: 1 + Math.floor(next() * 8) }, () => pieces[Math.floor(next() * pieces.length)]!)
  return words.join(next() < 0.7 ? " " : "")
}

const outputOf = (seed: number, lines: number, sectioned: boolean): string => {
  const next = random(seed)
  const out: Array<string> = []
  if (sectioned) out.push("exit code: 1", "STDOUT:")
  for (let i = 0; i < lines; i++) {
    if (sectioned && i === Math.floor(lines * 0.7)) out.push("STDERR:")
    out.push(lineOf(next) + (next() < 0.1 ? "\r" : ""))
  }
  return out.join("\n")
}

const optionSets: ReadonlyArray<readonly [string, CompactionOptions]> = [
  ["the defaults", defaultCompactionOptions],
  ["no context, no budget limit", { ...defaultCompactionOptions, contextLines: 0, matchBudgetBytes: 10_000_000 }],
  ["a small budget and wide context", { ...defaultCompactionOptions, contextLines: 5, matchBudgetBytes: 500 }],
  ["short heads and tails", { ...defaultCompactionOptions, headLines: 1, tailLines: 0, maxLineChars: 20 }]
]

describe("compaction gives the reference compactor's text", () => {
  for (const [name, options] of optionSets) {
    it(`on random logs (${name})`, () => {
      for (let seed = 1; seed <= 40; seed++) {
        const sectioned = seed % 2 === 0
        const text = outputOf(seed, 50 + (seed * 97) % 1_500, sectioned)
        assert.strictEqual(compactText(text, sectioned, options), referenceText(text, sectioned, options), `seed ${seed}`)
      }
    })
  }

  it("on a long log with CRLF endings, a huge single line and sections out of place", () => {
    const next = random(7)
    const lines = Array.from({ length: 20_000 }, () => lineOf(next))
    lines[5_000] = "y".repeat(2_000_000)
    lines[9_000] = "STDERR:"
    lines[9_001] = "STDOUT:"
    lines[12_000] = " STDOUT:"
    const text = lines.join("\r\n")
    for (const sectioned of [true, false]) {
      const out = compactText(text, sectioned, defaultCompactionOptions)
      assert.strictEqual(out, referenceText(text, sectioned, defaultCompactionOptions))
      assert.isTrue(out.length < text.length / 50, `compacted to ${out.length} of ${text.length}`)
    }
  })

  it("on texts without a newline, or made only of newlines", () => {
    for (const text of ["", "\n", "\n".repeat(500), "z".repeat(100_000), "error ".repeat(50_000), "STDOUT:", "STDERR:\n"]) {
      for (const sectioned of [true, false]) {
        assert.strictEqual(
          compactText(text, sectioned, defaultCompactionOptions),
          referenceText(text, sectioned, defaultCompactionOptions)
        )
      }
    }
  })

  it("keeps a secret on an important line as it was (compaction cuts lines, it does not rewrite them)", () => {
    const secretLine = "error: login failed with token sk-live-1234567890abcdef"
    const lines = Array.from({ length: 500 }, (_, i) => (i === 250 ? secretLine : `line ${i}`))
    const out = compactText(lines.join("\n"), false, defaultCompactionOptions).split("\n")
    assert.include(out, secretLine)
    assert.notInclude(out, "line 200")
  })
})
