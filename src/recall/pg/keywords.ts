/** Words a keyword query keeps at most, and characters a word (a longer one cannot be a word a chunk indexed). */
export const maxQueryWords = 64
export const maxWordLength = 200

/**
 * The words of a search, as the SQLite store's FTS5 query takes them: runs of letters, digits and `_`, lower-cased,
 * each once, the first 64. Everything else (quotes, `&|!():*`, backslashes, NUL, emoji) separates words and is gone,
 * so each word is bound on its own as a `plainto_tsquery` parameter and no character of the query is syntax.
 */
export const keywordQueryWords = (text: string): ReadonlyArray<string> =>
  [...new Set(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])]
    .filter((word) => word.length <= maxWordLength)
    .slice(0, maxQueryWords)
