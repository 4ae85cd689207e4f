/** Pure ranking and bundling for context_for_task: keywords from a task, file scores, excerpts within a budget. */
import { formatOutline, outlineOf } from "./outline.js"
import { counted } from "../config/counted.js"

const stopWords = new Set([
  "the", "and", "for", "with", "that", "this", "from", "into", "what", "when", "where", "which", "how", "why", "are",
  "was", "were", "has", "have", "had", "not", "but", "all", "any", "can", "could", "should", "would", "will", "about",
  "there", "their", "then", "than", "them", "they", "you", "your", "our", "use", "using", "make", "does", "did",
  "add", "fix", "find", "file", "files", "code", "need", "needs", "want", "please", "some", "also", "its", "it's"
])

/** Lowercase keywords of at least three characters, stop words dropped, at most 12. */
export const taskKeywords = (task: string): Array<string> => {
  const words = task.toLowerCase().split(/[^a-z0-9_$]+/).filter((word) => word.length >= 3 && !stopWords.has(word))
  return [...new Set(words)].slice(0, 12)
}

export interface ScoredFile {
  readonly path: string
  readonly score: number
}

const occurrences = (haystack: string, needle: string, cap: number): number => {
  let count = 0
  for (let at = haystack.indexOf(needle); at >= 0 && count < cap; at = haystack.indexOf(needle, at + needle.length)) count++
  return count
}

/** Path hits weigh most; content hits count with diminishing returns; files matching more keywords rank higher. */
export const scoreFile = (path: string, content: string, keywords: ReadonlyArray<string>): number => {
  const lowerPath = path.toLowerCase()
  const lowerContent = content.toLowerCase()
  let score = 0
  for (const keyword of keywords) {
    const inPath = lowerPath.includes(keyword) ? 6 : 0
    const inContent = occurrences(lowerContent, keyword, 50)
    if (inPath + inContent > 0) score += inPath + Math.log2(1 + inContent) + 1
  }
  return Math.round(score * 100) / 100
}

/** Numbered excerpts around keyword lines (one line of context), at most `maxHits` hits. */
export const excerpts = (lines: ReadonlyArray<string>, keywords: ReadonlyArray<string>, maxHits: number): string => {
  const keep = new Set<number>()
  let hits = 0
  for (let i = 0; i < lines.length && hits < maxHits; i++) {
    const lower = (lines[i] ?? "").toLowerCase()
    if (!keywords.some((keyword) => lower.includes(keyword))) continue
    hits++
    for (let j = Math.max(0, i - 1); j <= Math.min(lines.length - 1, i + 1); j++) keep.add(j)
  }
  const out: Array<string> = []
  let previous = -2
  for (const index of [...keep].sort((a, b) => a - b)) {
    if (index !== previous + 1 && out.length > 0) out.push("  …")
    const line = lines[index] ?? ""
    out.push(`${index + 1}: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`)
    previous = index
  }
  return out.join("\n")
}

/** One section per file (outline head and excerpts), added in rank order until the byte budget is spent. */
export const bundle = (
  ranked: ReadonlyArray<ScoredFile & { readonly lines: ReadonlyArray<string> }>,
  keywords: ReadonlyArray<string>,
  budgetBytes: number
): { readonly text: string; readonly included: ReadonlyArray<string> } => {
  const parts: Array<string> = [`Context for: ${keywords.join(", ")}`]
  let used = Buffer.byteLength(parts[0] ?? "")
  const included: Array<string> = []
  for (const file of ranked) {
    const outline = outlineOf(file.path, file.lines)
    const section = [
      `\n## ${file.path} (${counted(file.lines.length, "line")}, score ${file.score})`,
      ...(outline !== undefined && outline.length > 0 ? [`outline:\n${formatOutline(outline.slice(0, 10))}`] : []),
      excerpts(file.lines, keywords, 6)
    ].filter((part) => part !== "").join("\n")
    const size = Buffer.byteLength(section) + 1
    if (used + size > budgetBytes) {
      const room = budgetBytes - used - 40
      if (room > 200) {
        parts.push(`${section.slice(0, room)}\n[… cut to fit the budget]`)
        included.push(file.path)
      }
      break
    }
    parts.push(section)
    included.push(file.path)
    used += size
  }
  return { text: parts.join("\n"), included }
}
