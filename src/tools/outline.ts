/** Symbol outlines of source and Markdown files, by line patterns (no parser: fast and good enough to navigate). */

export interface OutlineEntry {
  readonly line: number
  readonly kind: string
  readonly name: string
  readonly depth: number
}

type Language = "script" | "markdown" | "python" | "go" | "rust"

const extensions: Record<string, Language> = {
  ts: "script", tsx: "script", mts: "script", cts: "script", js: "script", jsx: "script", mjs: "script",
  cjs: "script", md: "markdown", markdown: "markdown", mdx: "markdown", py: "python", go: "go", rs: "rust"
}

export const outlineLanguage = (fileName: string): Language | undefined => {
  const dot = fileName.lastIndexOf(".")
  return dot < 0 ? undefined : extensions[fileName.slice(dot + 1).toLowerCase()]
}

const scriptPatterns: ReadonlyArray<readonly [string, RegExp]> = [
  ["function", /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)/],
  ["class", /^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/],
  ["interface", /^\s*(?:export\s+)?(?:declare\s+)?interface\s+([A-Za-z_$][\w$]*)/],
  ["type", /^\s*(?:export\s+)?(?:declare\s+)?type\s+([A-Za-z_$][\w$]*)\s*(?:<[^=]*>)?\s*=/],
  ["enum", /^\s*(?:export\s+)?(?:declare\s+)?(?:const\s+)?enum\s+([A-Za-z_$][\w$]*)/],
  ["namespace", /^\s*(?:export\s+)?(?:declare\s+)?namespace\s+([A-Za-z_$][\w$.]*)/],
  ["export", /^(?:export\s+)(?:const|let|var)\s+([A-Za-z_$][\w$]*)/],
  ["function", /^(?:const|let)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=]*)?=>/],
  ["export", /^export\s+default\s+([A-Za-z_$][\w$]*)/]
]

const methodPattern = /^(\s+)(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*\*?([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*\([^)]*\)?\s*(?::[^{]*)?\{\s*$/
const notMethods = new Set(["if", "for", "while", "switch", "catch", "return", "function", "constructor"])

const scriptOutline = (lines: ReadonlyArray<string>): Array<OutlineEntry> => {
  const entries: Array<OutlineEntry> = []
  let classIndent = -1
  lines.forEach((text, index) => {
    const indent = text.length - text.trimStart().length
    if (classIndent >= 0 && text.trim() !== "" && indent <= classIndent && !text.trimStart().startsWith("}")) {
      classIndent = -1
    }
    for (const [kind, pattern] of scriptPatterns) {
      const match = pattern.exec(text)
      if (match?.[1] !== undefined) {
        entries.push({ line: index + 1, kind, name: match[1], depth: indent > 0 ? 1 : 0 })
        if (kind === "class") classIndent = indent
        return
      }
    }
    if (classIndent >= 0 && indent > classIndent) {
      const method = methodPattern.exec(text)
      const name = method?.[2]
      if (name !== undefined && !notMethods.has(name)) entries.push({ line: index + 1, kind: "method", name, depth: 1 })
    }
  })
  return entries
}

const markdownOutline = (lines: ReadonlyArray<string>): Array<OutlineEntry> => {
  const entries: Array<OutlineEntry> = []
  let fenced = false
  lines.forEach((text, index) => {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced
    if (fenced) return
    const match = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(text)
    if (match?.[1] !== undefined && match[2] !== undefined) {
      entries.push({ line: index + 1, kind: `h${match[1].length}`, name: match[2], depth: match[1].length - 1 })
    }
  })
  return entries
}

const byPatterns = (patterns: ReadonlyArray<readonly [string, RegExp]>) => (lines: ReadonlyArray<string>) => {
  const entries: Array<OutlineEntry> = []
  lines.forEach((text, index) => {
    for (const [kind, pattern] of patterns) {
      const match = pattern.exec(text)
      if (match?.[2] !== undefined) {
        entries.push({ line: index + 1, kind, name: match[2], depth: (match[1]?.length ?? 0) > 0 ? 1 : 0 })
        return
      }
    }
  })
  return entries
}

const outliners: Record<Language, (lines: ReadonlyArray<string>) => Array<OutlineEntry>> = {
  script: scriptOutline,
  markdown: markdownOutline,
  python: byPatterns([["class", /^(\s*)class\s+([A-Za-z_]\w*)/], ["def", /^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)/]]),
  go: byPatterns([
    ["func", /^()func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)/],
    ["type", /^()type\s+([A-Za-z_]\w*)/]
  ]),
  rust: byPatterns([
    ["fn", /^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_]\w*)/],
    ["type", /^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|impl|mod)\s+([A-Za-z_]\w*)/]
  ])
}

/** The outline of a file, or undefined when its type has no outliner. */
export const outlineOf = (fileName: string, lines: ReadonlyArray<string>): Array<OutlineEntry> | undefined => {
  const language = outlineLanguage(fileName)
  return language === undefined ? undefined : outliners[language](lines)
}

export const formatOutline = (entries: ReadonlyArray<OutlineEntry>): string => {
  const width = String(entries.reduce((max, entry) => Math.max(max, entry.line), 1)).length
  return entries
    .map((entry) => `${String(entry.line).padStart(width, " ")}  ${"  ".repeat(entry.depth)}${entry.kind} ${entry.name}`)
    .join("\n")
}
