/**
 * Output compaction (seed 004): an oversized tool output keeps its first and last lines and the lines that matter
 * (errors, failures, warnings, test results, search hits) with a little context; everything else becomes
 * `[... N lines omitted ...]`. Pure functions: the OutputCompactor stores the full text and counts the savings.
 */

export interface CompactionOptions {
  /** Outputs larger than this (bytes) are compacted. */
  readonly thresholdBytes: number
  /** Error outputs smaller than this are always left whole. */
  readonly errorKeepBytes: number
  readonly headLines: number
  readonly tailLines: number
  readonly contextLines: number
  /** Budget for the matching lines kept between head and tail (bytes), so a wall of matches cannot undo the cut. */
  readonly matchBudgetBytes: number
  /** Longer lines are cut (a minified bundle is one line). */
  readonly maxLineChars: number
}

export const defaultCompactionOptions: CompactionOptions = {
  thresholdBytes: 12 * 1024,
  errorKeepBytes: 8 * 1024,
  headLines: 40,
  tailLines: 40,
  contextLines: 2,
  matchBudgetBytes: 6 * 1024,
  maxLineChars: 400
}

/**
 * The kinds of lines kept from the middle of an output. Symbols are written as `\u` escapes: one non-ASCII character
 * in a bundle makes V8 hold all of its text at two bytes a character (test/package/asciiBundles.test.ts).
 */
export const importantLinePatterns: ReadonlyArray<readonly [string, RegExp]> = [
  ["error", /\b(?:errors?|exception|traceback|panic(?:ked)?|fatal|segmentation fault)\b|\bERR!|\bE\d{3,}\b/i],
  ["fail", /\b(?:fail(?:s|ed|ure|ures|ing)?|broken|abort(?:ed)?)\b|\u2717|\u2718/i],
  ["warning", /\bwarn(?:ing|ings)?\b/i],
  ["test-result", /\b\d+\s+(?:passed|failed|passing|failing|skipped|pending|tests?|specs?|errors?)\b|^\s*(?:Tests?|Test Files|Suites?):|^(?:PASS|FAIL|ok|not ok)\b|\u2713/i],
  ["search-result", /^[^\s:][^:\n]{0,300}:\d+:/]
]

const combined = new RegExp(importantLinePatterns.map(([, pattern]) => `(?:${pattern.source})`).join("|"), "i")

export const isImportantLine = (line: string): boolean => combined.test(line)

/**
 * What a line `combined` matches must hold, found by one pass over the whole output instead of one test per line:
 * each pattern's words at a word start (or a line start), its symbols, `:<digit>` for a search hit. A line it finds
 * is tested with `combined`, so the lines kept are exactly those `isImportantLine` keeps; it must only never miss one
 * (a new pattern above needs its words here too). Without `m`, `\n` stands for a line start; `[^\S\n]` keeps a
 * match on its line. Built for each block: a global regex carries its place (`lastIndex`).
 */
const candidateSource = String.raw`\b(?:err|exc|trac|pani|fata|segm|E\d{3}|fail|brok|abor|warn|test|suit)|[\u2717\u2718\u2713]|` +
  String.raw`\d[^\S\n]+(?:pass|skip|pend|spec)|:\d|(?:^|\n)(?:pass|ok|not ok)`

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8")

export const shouldCompact = (bytes: number, isError: boolean, options: CompactionOptions = defaultCompactionOptions) =>
  !(isError && bytes < options.errorKeepBytes) && bytes > options.thresholdBytes

const omitted = (count: number) => `[... ${count} line${count === 1 ? "" : "s"} omitted ...]`

const cutLine = (line: string, max: number) => (line.length > max ? `${line.slice(0, max)}… [${line.length - max} chars cut]` : line)

/**
 * A text's lines by where they start, without splitting it (an output of 10 MB is 200k lines, most of them
 * omitted): line i is `text.slice(starts[i], starts[i + 1] - 1)`.
 */
interface LineIndex {
  readonly text: string
  readonly starts: Int32Array
}

/** Counted first, then filled: growing an array line by line costs several times the scan. */
const indexLines = (text: string): LineIndex => {
  let lines = 1
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++
  const starts = new Int32Array(lines + 1)
  let line = 1
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) starts[line++] = at + 1
  starts[lines] = text.length + 1
  return { text, starts }
}

const lineAt = ({ starts, text }: LineIndex, i: number) => text.slice(starts[i]!, starts[i + 1]! - 1)
const lengthAt = ({ starts }: LineIndex, i: number) => starts[i + 1]! - 1 - starts[i]!

/** Compacts the lines [from, to) of an indexed text (a whole output, or one STDOUT/STDERR section). */
const compactBlock = (index: LineIndex, from: number, to: number, options: CompactionOptions): Array<string> => {
  const total = to - from
  const out: Array<string> = []
  if (total <= options.headLines + options.tailLines) {
    for (let i = from; i < to; i++) out.push(cutLine(lineAt(index, i), options.maxLineChars))
    return out
  }
  const keep = new Uint8Array(total)
  for (let i = 0; i < options.headLines; i++) keep[i] = 1
  for (let i = total - options.tailLines; i < total; i++) keep[i] = 1
  let budget = options.matchBudgetBytes
  let skippedMatches = 0
  const middleEnd = total - options.tailLines
  const { starts, text } = index
  const scan = new RegExp(candidateSource, "gi")
  // From the newline before the first middle line: a match of `\n…` belongs to the line after its newline.
  scan.lastIndex = Math.max(0, starts[from + options.headLines]! - 1)
  let i = options.headLines
  for (let match = scan.exec(text); match !== null; match = scan.exec(text)) {
    const at = text.charCodeAt(match.index) === 10 ? match.index + 1 : match.index
    while (starts[from + i + 1]! <= at) i++
    if (i >= middleEnd) break
    scan.lastIndex = starts[from + i + 1]! - 1
    if (!combined.test(lineAt(index, from + i))) continue
    const first = Math.max(0, i - options.contextLines)
    const last = Math.min(total - 1, i + options.contextLines)
    let cost = 0
    for (let j = first; j <= last; j++) if (keep[j] === 0) cost += Math.min(lengthAt(index, from + j), options.maxLineChars) + 1
    if (cost > budget) {
      skippedMatches++
      continue
    }
    budget -= cost
    for (let j = first; j <= last; j++) keep[j] = 1
  }
  let gap = 0
  for (let i = 0; i < total; i++) {
    if (keep[i] === 1) {
      if (gap > 0) out.push(omitted(gap))
      gap = 0
      out.push(cutLine(lineAt(index, from + i), options.maxLineChars))
    } else {
      gap++
    }
  }
  if (gap > 0) out.push(omitted(gap))
  if (skippedMatches > 0) out.push(`[... ${skippedMatches} more matching lines omitted: over the budget ...]`)
  return out
}

/** Compacts one block of lines (a whole output, or one STDOUT/STDERR section). */
export const compactLines = (lines: ReadonlyArray<string>, options: CompactionOptions = defaultCompactionOptions) =>
  compactBlock(indexLines(lines.join("\n")), 0, lines.length, options)

const sectionHeaders = ["STDOUT:", "STDERR:"]
const isSectionHeader = (index: LineIndex, i: number) =>
  lengthAt(index, i) === 7 && sectionHeaders.some((header) => index.text.startsWith(header, index.starts[i]!))

/**
 * Compacts text; with `sectioned`, each `STDOUT:` / `STDERR:` section (bash output) is compacted on its own so a
 * long stdout cannot push stderr out.
 */
export const compactText = (text: string, sectioned: boolean, options: CompactionOptions = defaultCompactionOptions) => {
  const index = indexLines(text)
  const lines = index.starts.length - 1
  if (!sectioned) return compactBlock(index, 0, lines, options).join("\n")
  const out: Array<string> = []
  let start = 0
  for (let i = 0; i <= lines; i++) {
    if (i === lines || (i > start && isSectionHeader(index, i))) {
      const header = i > start && isSectionHeader(index, start)
      if (header) out.push(lineAt(index, start))
      out.push(...compactBlock(index, header ? start + 1 : start, i, options))
      start = i
    }
  }
  return out.join("\n")
}

export const compactionHeader = (originalBytes: number, compactedBytes: number, artifactId: string) =>
  `[output compacted: ${originalBytes} bytes → ${compactedBytes} bytes; full output is artifact ${artifactId}: ` +
  `retrieve_tool_output({ "artifactId": "${artifactId}" }) with offset/limit/grep]`
