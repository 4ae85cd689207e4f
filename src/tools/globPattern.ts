/** Glob patterns as regular expressions: `**`, `*`, `?`, `[abc]`, `[!abc]`, `{a,b}`; pure. */

const special = /[.+^${}()|[\]\\/]/

const translate = (pattern: string): string => {
  let out = ""
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] ?? ""
    if (char === "*") {
      if (pattern[i + 1] === "*") {
        const atSegmentStart = i === 0 || pattern[i - 1] === "/"
        const next = pattern[i + 2]
        if (atSegmentStart && next === "/") {
          out += "(?:[^/]*/)*"
          i += 2
          continue
        }
        if (atSegmentStart && next === undefined) {
          out += ".*"
          i += 1
          continue
        }
        out += "[^/]*"
        i += 1
        continue
      }
      out += "[^/]*"
    } else if (char === "?") {
      out += "[^/]"
    } else if (char === "[") {
      const close = pattern.indexOf("]", i + 2)
      if (close < 0) {
        out += "\\["
        continue
      }
      let body = pattern.slice(i + 1, close)
      const negate = body.startsWith("!") || body.startsWith("^")
      if (negate) body = body.slice(1)
      out += `[${negate ? "^" : ""}${body.replace(/\\/g, "\\\\").replace(/\]/g, "\\]")}]`
      i = close
    } else if (char === "{") {
      let depth = 0
      let close = -1
      for (let j = i; j < pattern.length; j++) {
        if (pattern[j] === "{") depth++
        if (pattern[j] === "}" && --depth === 0) {
          close = j
          break
        }
      }
      if (close < 0) {
        out += "\\{"
        continue
      }
      out += `(?:${splitAlternatives(pattern.slice(i + 1, close)).map(translate).join("|")})`
      i = close
    } else if (char === "\\" && i + 1 < pattern.length) {
      const escaped = pattern[++i] ?? ""
      out += special.test(escaped) ? `\\${escaped}` : escaped
    } else {
      out += special.test(char) && char !== "/" ? `\\${char}` : char
    }
  }
  return out
}

const splitAlternatives = (body: string): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < body.length; i++) {
    if (body[i] === "{") depth++
    else if (body[i] === "}") depth--
    else if (body[i] === "," && depth === 0) {
      parts.push(body.slice(start, i))
      start = i + 1
    }
  }
  parts.push(body.slice(start))
  return parts
}

export interface GlobMatcher {
  /** Tests a `/`-separated path relative to the search folder. */
  readonly matches: (relativePath: string) => boolean
}

/**
 * Compiles a glob. A pattern without `/` matches file names at any depth (`*.md` finds every Markdown file), as in
 * .gitignore; a pattern with `/` matches the whole path relative to the search folder.
 */
export const compileGlob = (pattern: string): GlobMatcher => {
  const trimmed = pattern.replace(/^\.\//, "")
  const regex = new RegExp(`^${translate(trimmed)}$`)
  if (trimmed.includes("/")) return { matches: (path) => regex.test(path) }
  return {
    matches: (path) => {
      const slash = path.lastIndexOf("/")
      return regex.test(slash < 0 ? path : path.slice(slash + 1))
    }
  }
}
