import { describe, expect, it } from "@effect/vitest"
import { importantLinePatterns, isImportantLine } from "../../src/tools/compaction.js"

/** The patterns alone, as compaction judged lines before its quick pre-test. */
const full = new RegExp(importantLinePatterns.map(([, pattern]) => `(?:${pattern.source})`).join("|"), "i")

const pieces = [
  "error", "Errors", "ERR!", "E1234", "e404", "exception", "Traceback", "panicked", "fatal", "segmentation fault",
  "fail", "FAILED", "failures", "failing", "broken", "aborted", "✗", "✘", "warn", "Warnings", "3 passed", "12\tfailing",
  "1 test", "4  specs", "0 errors", "7 skipped", "Tests:", "  Test Files:", "Suites:", "PASS", "FAIL", "ok", "not ok",
  "✓", "src/a.ts:12:", "a:1:", "x", " ", ":", "12", "err", "erroring", "terror", "Ok", "okay", "passed", "3 ", "\r",
  "ERR", "E12", "warning", "_error_", "test", "suite", "pass", "panic", "passes", ":12", "12:", "-", "\t", "ü", "K"
]

/** Every line of one or two pieces, with and without text around them, and a seeded spread of longer mixes. */
const corpus = (): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const a of pieces) {
    lines.push(a, ` ${a}`, `x${a}`, `${a}x`, `[1] ${a} done`)
    for (const b of pieces) lines.push(`${a}${b}`, `${a} ${b}`, `${a}:${b}`)
  }
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
  for (let i = 0; i < 20_000; i++) {
    const count = 1 + (next() % 5)
    lines.push(Array.from({ length: count }, () => pieces[next() % pieces.length]).join(next() % 2 === 0 ? " " : ""))
  }
  return lines
}

describe("compaction's quick pre-test", () => {
  it("keeps exactly the lines the full patterns keep, over a corpus of line forms", () => {
    const lines = corpus()
    const differ = lines.filter((line) => isImportantLine(line) !== full.test(line))
    expect(differ).toEqual([])
    // The corpus has both kinds in numbers.
    expect(lines.filter((line) => full.test(line)).length).toBeGreaterThan(1000)
    expect(lines.filter((line) => !full.test(line)).length).toBeGreaterThan(100)
  })
})
