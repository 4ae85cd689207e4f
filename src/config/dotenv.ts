import { parseEnv } from "node:util"

/** The keys and values of a `.env` file, plus a note for every line that is not `KEY=VALUE`. */
export interface DotenvResult {
  readonly values: Readonly<Record<string, string>>
  readonly problems: ReadonlyArray<string>
}

const keyPattern = /^[A-Za-z_][A-Za-z0-9_]*$/
const assignment = /^\s*(?:export\s+)?([^=\s]+)\s*=\s*(.*)$/
const quotes = ["\"", "'", "`"]

/** The quote a value opens without closing on its own line (a multi-line value), if any. */
const openQuote = (value: string): string | undefined => {
  const quote = value[0]
  return quote !== undefined && quotes.includes(quote) && !value.slice(1).includes(quote) ? quote : undefined
}

/**
 * Node's dotenv parser (`util.parseEnv`: quotes, `# comments`, `export`, multi-line quoted values) does the parsing.
 * It has no notion of a bad line, and glues one onto the next key, so lines that are not `KEY=VALUE` (outside a
 * multi-line value) are set aside first and reported.
 */
export const parseDotenv = (text: string): DotenvResult => {
  const problems: Array<string> = []
  const kept: Array<string> = []
  let inside: string | undefined
  text.split(/\r?\n/).forEach((line, index) => {
    if (inside !== undefined) {
      kept.push(line)
      if (line.includes(inside)) inside = undefined
      return
    }
    const trimmed = line.trim()
    if (trimmed === "" || trimmed.startsWith("#")) return
    const match = assignment.exec(line)
    const key = match?.[1]
    if (match === null || key === undefined || !keyPattern.test(key)) {
      problems.push(`line ${index + 1} is not KEY=VALUE and was ignored`)
      return
    }
    kept.push(line)
    inside = openQuote(match[2] ?? "")
  })
  if (inside !== undefined) problems.push(`a value opened with ${inside} is never closed`)
  const values: Record<string, string> = {}
  for (const [key, value] of Object.entries(parseEnv(kept.join("\n")))) if (value !== undefined) values[key] = value
  return { values, problems }
}
