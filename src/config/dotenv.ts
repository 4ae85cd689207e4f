/** The keys and values of a `.env` file, plus a note for every line that is not `KEY=VALUE`. */
export interface DotenvResult {
  readonly values: Readonly<Record<string, string>>
  readonly problems: ReadonlyArray<string>
}

const keyPattern = /^[A-Za-z_][A-Za-z0-9_]*$/

const unquote = (raw: string): string => {
  const value = raw.trim()
  if (value.length >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
    return value.slice(1, -1).replace(/\\n/g, "\n").replace(/\\r/g, "\r").replace(/\\t/g, "\t").replace(/\\(["\\])/g, "$1")
  }
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1)
  const comment = value.search(/\s#/)
  return comment === -1 ? value : value.slice(0, comment).trimEnd()
}

export const parseDotenv = (text: string): DotenvResult => {
  const values: Record<string, string> = {}
  const problems: Array<string> = []
  text.split(/\r?\n/).forEach((line, index) => {
    const trimmed = line.trim()
    if (trimmed === "" || trimmed.startsWith("#")) return
    const body = trimmed.startsWith("export ") ? trimmed.slice(7).trimStart() : trimmed
    const eq = body.indexOf("=")
    const key = eq === -1 ? "" : body.slice(0, eq).trim()
    if (!keyPattern.test(key)) {
      problems.push(`line ${index + 1} is not KEY=VALUE and was ignored`)
      return
    }
    values[key] = unquote(body.slice(eq + 1))
  })
  return { values, problems }
}
