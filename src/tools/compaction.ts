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

/** The kinds of lines kept from the middle of an output. */
export const importantLinePatterns: ReadonlyArray<readonly [string, RegExp]> = [
  ["error", /\b(?:errors?|exception|traceback|panic(?:ked)?|fatal|segmentation fault)\b|\bERR!|\bE\d{3,}\b/i],
  ["fail", /\b(?:fail(?:s|ed|ure|ures|ing)?|broken|abort(?:ed)?)\b|✗|✘/i],
  ["warning", /\bwarn(?:ing|ings)?\b/i],
  ["test-result", /\b\d+\s+(?:passed|failed|passing|failing|skipped|pending|tests?|specs?|errors?)\b|^\s*(?:Tests?|Test Files|Suites?):|^(?:PASS|FAIL|ok|not ok)\b|✓/i],
  ["search-result", /^[^\s:][^:\n]{0,300}:\d+:/]
]

const combined = new RegExp(importantLinePatterns.map(([, pattern]) => `(?:${pattern.source})`).join("|"), "i")

export const isImportantLine = (line: string): boolean => combined.test(line)

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8")

export const shouldCompact = (bytes: number, isError: boolean, options: CompactionOptions = defaultCompactionOptions) =>
  !(isError && bytes < options.errorKeepBytes) && bytes > options.thresholdBytes

const omitted = (count: number) => `[... ${count} line${count === 1 ? "" : "s"} omitted ...]`

const cutLine = (line: string, max: number) => (line.length > max ? `${line.slice(0, max)}… [${line.length - max} chars cut]` : line)

/** Compacts one block of lines (a whole output, or one STDOUT/STDERR section). */
export const compactLines = (lines: ReadonlyArray<string>, options: CompactionOptions = defaultCompactionOptions) => {
  const total = lines.length
  if (total <= options.headLines + options.tailLines) return lines.map((line) => cutLine(line, options.maxLineChars))
  const keep = new Uint8Array(total)
  for (let i = 0; i < options.headLines; i++) keep[i] = 1
  for (let i = total - options.tailLines; i < total; i++) keep[i] = 1
  let budget = options.matchBudgetBytes
  let skippedMatches = 0
  const middleEnd = total - options.tailLines
  for (let i = options.headLines; i < middleEnd; i++) {
    const line = lines[i] ?? ""
    if (!combined.test(line)) continue
    const from = Math.max(0, i - options.contextLines)
    const to = Math.min(total - 1, i + options.contextLines)
    let cost = 0
    for (let j = from; j <= to; j++) if (keep[j] === 0) cost += Math.min((lines[j] ?? "").length, options.maxLineChars) + 1
    if (cost > budget) {
      skippedMatches++
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
      out.push(cutLine(lines[i] ?? "", options.maxLineChars))
    } else {
      gap++
    }
  }
  if (gap > 0) out.push(omitted(gap))
  if (skippedMatches > 0) out.push(`[... ${skippedMatches} more matching lines omitted: over the budget ...]`)
  return out
}

const sectionHeader = /^(?:STDOUT|STDERR):$/

/**
 * Compacts text; with `sectioned`, each `STDOUT:` / `STDERR:` section (bash output) is compacted on its own so a
 * long stdout cannot push stderr out.
 */
export const compactText = (text: string, sectioned: boolean, options: CompactionOptions = defaultCompactionOptions) => {
  const lines = text.split("\n")
  if (!sectioned) return compactLines(lines, options).join("\n")
  const out: Array<string> = []
  let start = 0
  for (let i = 0; i <= lines.length; i++) {
    if (i === lines.length || (i > start && sectionHeader.test(lines[i] ?? ""))) {
      const section = lines.slice(start, i)
      const header = section.length > 0 && sectionHeader.test(section[0] ?? "")
      if (header) out.push(section[0] ?? "")
      out.push(...compactLines(header ? section.slice(1) : section, options))
      start = i
    }
  }
  return out.join("\n")
}

export const compactionHeader = (originalBytes: number, compactedBytes: number, artifactId: string) =>
  `[output compacted: ${originalBytes} bytes → ${compactedBytes} bytes; full output is artifact ${artifactId}: ` +
  `retrieve_tool_output({ "artifactId": "${artifactId}" }) with offset/limit/grep]`
