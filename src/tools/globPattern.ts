import picomatch from "picomatch"

export interface GlobMatcher {
  /** Tests a `/`-separated path relative to the search folder. */
  readonly matches: (relativePath: string) => boolean
}

/**
 * Compiles a glob with picomatch (`**`, `*`, `?`, `[abc]`, `[!abc]`, `{a,b}`; dot files included). A pattern without
 * `/` matches file names at any depth (`*.md` finds every Markdown file), as in .gitignore; a pattern with `/` matches
 * the whole path relative to the search folder.
 */
export const compileGlob = (pattern: string): GlobMatcher => {
  const trimmed = pattern.replace(/^\.\//, "")
  // posix: `[!ab]` is a negated class, as in shells and .gitignore.
  const matches = picomatch(trimmed, { dot: true, posix: true })
  if (trimmed.includes("/")) return { matches: (path) => matches(path) }
  // Matching the name alone is about 3× faster than picomatch's own basename mode.
  return { matches: (path) => matches(path.slice(path.lastIndexOf("/") + 1)) }
}
