import { assert, describe, it } from "@effect/vitest"
import {
  compactLines,
  compactText,
  defaultCompactionOptions,
  importantLinePatterns,
  isImportantLine,
  shouldCompact
} from "../../src/tools/compaction.js"

const filler = (from: number, count: number) => Array.from({ length: count }, (_, i) => `plain output line ${from + i}`)

describe("shouldCompact (thresholds)", () => {
  const cases: ReadonlyArray<readonly [string, number, boolean, boolean]> = [
    ["a small output stays whole", 1_000, false, false],
    ["exactly 12 KB stays whole", 12 * 1024, false, false],
    ["over 12 KB is compacted", 12 * 1024 + 1, false, true],
    ["a big error output is compacted", 20_000, true, true],
    ["a small error output stays whole", 7_000, true, false]
  ]
  for (const [name, bytes, isError, expected] of cases) {
    it(name, () => assert.strictEqual(shouldCompact(bytes, isError), expected))
  }
  it("error outputs under the error limit stay whole even when the threshold is lower", () => {
    const options = { ...defaultCompactionOptions, thresholdBytes: 4_000, errorKeepBytes: 6_000 }
    assert.isFalse(shouldCompact(5_000, true, options))
    assert.isTrue(shouldCompact(5_000, false, options))
    assert.isTrue(shouldCompact(6_500, true, options))
  })
})

describe("important lines", () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ["src/a.ts:12:5 - error TS2322: Type 'x' is not assignable", true],
    ["Traceback (most recent call last):", true],
    ["npm ERR! code ELIFECYCLE", true],
    ["FAILED tests/test_x.py::test_y", true],
    ["warning: unused variable `x`", true],
    ["Tests: 3 failed, 97 passed, 100 total", true],
    ["  ✓ parses the header (3 ms)", true],
    ["not ok 7 - handles empty input", true],
    ["src/tools/grep.ts:42:const x = 1", true],
    ["compiling module 12 of 300", false],
    ["downloading https://example.com/x.tgz", false],
    ["the terror of the firewall", false]
  ]
  for (const [line, expected] of cases) {
    it(`${expected ? "keeps" : "drops"} ${JSON.stringify(line)}`, () => assert.strictEqual(isImportantLine(line), expected))
  }
  it("names every pattern kind of the seed", () => {
    assert.deepStrictEqual(importantLinePatterns.map(([kind]) => kind), ["error", "fail", "warning", "test-result", "search-result"])
  })
})

describe("compactLines", () => {
  it("keeps the first 40 and last 40 lines and marks the gap", () => {
    const lines = filler(1, 200)
    const out = compactLines(lines)
    assert.deepStrictEqual(out.slice(0, 40), lines.slice(0, 40))
    assert.strictEqual(out[40], "[... 120 lines omitted ...]")
    assert.deepStrictEqual(out.slice(41), lines.slice(160))
  })

  it("keeps a matching line with 2 lines of context on each side", () => {
    const lines = filler(1, 200)
    lines[99] = "Error: connection refused"
    const out = compactLines(lines)
    assert.deepStrictEqual(out.slice(40, 47), [
      "[... 57 lines omitted ...]",
      "plain output line 98",
      "plain output line 99",
      "Error: connection refused",
      "plain output line 101",
      "plain output line 102",
      "[... 58 lines omitted ...]"
    ])
  })

  it("merges overlapping context windows", () => {
    const lines = filler(1, 200)
    lines[99] = "warning: one"
    lines[101] = "warning: two"
    const out = compactLines(lines)
    assert.deepStrictEqual(out.slice(41, 48), [
      "plain output line 98", "plain output line 99", "warning: one", "plain output line 101", "warning: two",
      "plain output line 103", "plain output line 104"
    ])
  })

  it("leaves short outputs whole and cuts very long lines", () => {
    const lines = [...filler(1, 10), "z".repeat(1000)]
    const out = compactLines(lines)
    assert.deepStrictEqual(out.slice(0, 10), lines.slice(0, 10))
    assert.strictEqual(out[10], `${"z".repeat(400)}… [600 chars cut]`)
  })

  it("a wall of matches cannot undo the cut: matches beyond the budget are counted, not kept", () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => `src/file${i}.ts:${i}:match here`)
    const out = compactLines(lines)
    const bytes = out.join("\n").length
    assert.isTrue(bytes < 16 * 1024, `compacted to ${bytes} bytes`)
    assert.match(out[out.length - 1] ?? "", /more matching lines omitted/)
  })
})

describe("compactText", () => {
  it("compacts STDOUT and STDERR separately so stderr survives a long stdout", () => {
    const text = ["exit code: 1", "STDOUT:", ...filler(1, 300), "STDERR:", ...filler(1000, 100).map((l) => `err ${l}`)].join("\n")
    const out = compactText(text, true).split("\n")
    assert.strictEqual(out[0], "exit code: 1")
    assert.strictEqual(out[1], "STDOUT:")
    assert.strictEqual(out[42], "[... 220 lines omitted ...]")
    const stderrAt = out.indexOf("STDERR:")
    assert.strictEqual(out[stderrAt + 1], "err plain output line 1000")
    assert.strictEqual(out[stderrAt + 41], "[... 20 lines omitted ...]")
    assert.strictEqual(out[out.length - 1], "err plain output line 1099")
  })

  it("without sections, the whole text is one block", () => {
    const text = ["STDOUT:", ...filler(1, 300)].join("\n")
    const out = compactText(text, false).split("\n")
    assert.strictEqual(out[40], "[... 221 lines omitted ...]")
  })
})

describe("compaction keeps exactly the important lines (the whole-output scan agrees with isImportantLine)", () => {
  // Lines where a scan of the whole output could disagree with a test of each line: `^` after a \r or U+2028 (a line
  // start only for a multiline regex), a match that would run into the next line, blank lines, CRLF endings.
  const corpus = [
    "x\rok fine", "x\u2028Tests: 3", "x\u2029PASS now", "abc\rFAIL", "no\rnot ok", "5", "passed", "  ", "",
    "Tests: 1 failed", "   Suites: 2", "ok 1 - fine", "okay then", "error\r", "warning\r", "line\r", "E1234 code",
    "src/a.ts:3:", ":3:4", " a.ts:3:4", "3 \n".trim(), "12\tpassed", "✓ done", "a\u2028b.ts:3:", "the terror",
    "STDOUT: not a header", "fail", "Failures: none",
    // Each pattern's forms, at a line's start, inside it and inside a word (which does not count).
    "npm ERR! code 1", "Traceback (most recent call last):", "thread panicked at x", "Segmentation fault (core dumped)",
    "error[E0502]: cannot borrow", "E0502", "fatal: not a git repository", "an exception occurred", "panic: oops",
    "broken pipe", "aborted", "job abort", "✗ one", "✘ two", "3 passing", "2 pending", "4 specs", "1 skipped",
    "Test Files  3 passed", "PASS src/x.test.ts", "pass", "xpass", "not ok 3", "FAIL x", "stderr noise line 4",
    "terrors", "prefailure", "awarning", "testing 1 2", "contest", "Suite: a", "pursuite", "12 tests", "12tests",
    "ok", " ok 1", "look ok", "a:1", "a:b:1:", "x:1:2", " x:1:2", ":1:2:", "line 9 passed", "E12 short", "e999 lower"
  ]
  const options = { ...defaultCompactionOptions, contextLines: 0, matchBudgetBytes: 1_000_000 }
  const expected = (middle: ReadonlyArray<string>) => {
    const out: Array<string> = []
    let gap = 0
    for (const line of middle) {
      if (isImportantLine(line)) {
        if (gap > 0) out.push(`[... ${gap} line${gap === 1 ? "" : "s"} omitted ...]`)
        gap = 0
        out.push(line)
      } else gap++
    }
    if (gap > 0) out.push(`[... ${gap} line${gap === 1 ? "" : "s"} omitted ...]`)
    return out
  }
  it("in one block", () => {
    const head = filler(1, 40)
    const tail = filler(1000, 40)
    const middle = [...filler(100, 3), ...corpus, ...filler(200, 2), ...corpus.map((line) => `${line}\r`)]
    const out = compactText([...head, ...middle, ...tail].join("\n"), false, options).split("\n")
    assert.deepStrictEqual(out, [...head, ...expected(middle), ...tail].join("\n").split("\n"))
  })
  it("in sections", () => {
    const stdout = [...filler(1, 40), ...corpus, ...filler(300, 40)]
    const stderr = [...filler(500, 40), ...corpus.slice().reverse(), ...filler(600, 40)]
    const out = compactText(["exit code: 1", "STDOUT:", ...stdout, "STDERR:", ...stderr].join("\n"), true, options)
    const want = [
      "exit code: 1", "STDOUT:", ...stdout.slice(0, 40), ...expected(corpus), ...stdout.slice(-40),
      "STDERR:", ...stderr.slice(0, 40), ...expected(corpus.slice().reverse()), ...stderr.slice(-40)
    ]
    assert.strictEqual(out, want.join("\n"))
  })
})
