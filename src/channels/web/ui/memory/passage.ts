// A recall hit's text as a person reads a search result: the passage around the first match, the query's words marked.
// Pure, so it is unit-tested under Node; the marks are data, rendered as <mark> around text, never as HTML.

export interface Piece {
  readonly text: string
  readonly match: boolean
}

/** Characters of context shown before the first match (a passage starts at a line or a word, not mid-word). */
const leadChars = 120
/** How long a passage is at most. */
export const passageChars = 420

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The query's words worth marking: two characters or more, longest first (so "heron" wins over "he"). */
export const queryWords = (query: string): ReadonlyArray<string> =>
  [...new Set(query.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter((word) => word.length >= 2))].sort((a, b) => b.length - a.length)

/** Where a passage of `text` starts so the first match has some context before it. */
const startAt = (text: string, firstMatch: number): number => {
  if (firstMatch <= leadChars) return 0
  const from = firstMatch - leadChars
  const line = text.lastIndexOf("\n", firstMatch)
  if (line >= from) return line + 1
  const space = text.indexOf(" ", from)
  return space === -1 || space >= firstMatch ? from : space + 1
}

/**
 * The passage of `text` to show for `query`: at most passageChars around the first of its words found (the start
 * when none is, as a keyword-less vector hit may be), with "…" where text was left out, in pieces that say which
 * are matches.
 */
export const passage = (text: string, query: string): ReadonlyArray<Piece> => {
  const words = queryWords(query)
  const pattern = words.length === 0 ? undefined : new RegExp(words.map(escapeRegExp).join("|"), "giu")
  const first = pattern === undefined ? -1 : text.search(pattern)
  const start = first === -1 ? 0 : startAt(text, first)
  const end = Math.min(text.length, start + passageChars)
  const shown = `${start > 0 ? "…" : ""}${text.slice(start, end).trim()}${end < text.length ? "…" : ""}`
  if (pattern === undefined) return [{ text: shown, match: false }]
  const pieces: Array<Piece> = []
  let at = 0
  for (const found of shown.matchAll(pattern)) {
    const index = found.index ?? 0
    if (index > at) pieces.push({ text: shown.slice(at, index), match: false })
    pieces.push({ text: found[0], match: true })
    at = index + found[0].length
  }
  if (at < shown.length) pieces.push({ text: shown.slice(at), match: false })
  return pieces
}
