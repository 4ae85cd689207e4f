/** Pure helpers for edit: counting exact matches and naming the line that came closest when there is none. */

export const countOccurrences = (haystack: string, needle: string): number => {
  let count = 0
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) count++
  return count
}

const bigrams = (text: string): Map<string, number> => {
  const grams = new Map<string, number>()
  for (let i = 0; i < text.length - 1; i++) {
    const gram = text.slice(i, i + 2)
    grams.set(gram, (grams.get(gram) ?? 0) + 1)
  }
  return grams
}

/** Dice coefficient over character bigrams: 1 for equal strings, 0 for nothing in common. */
export const similarity = (a: string, b: string): number => {
  if (a === b) return 1
  if (a.length < 2 || b.length < 2) return 0
  const left = bigrams(a)
  let shared = 0
  for (const [gram, count] of bigrams(b)) shared += Math.min(count, left.get(gram) ?? 0)
  return (2 * shared) / (a.length - 1 + b.length - 1)
}

const maxComparedLines = 20_000

/** The file line most like the first non-blank line of `needle`, when anything is at all alike. */
export const closestLine = (content: string, needle: string): { readonly line: number; readonly text: string } | undefined => {
  const target = (needle.split("\n").find((line) => line.trim() !== "") ?? needle).trim().slice(0, 300)
  if (target === "") return undefined
  const lines = content.split("\n", maxComparedLines)
  let best: { line: number; text: string; score: number } | undefined
  lines.forEach((text, index) => {
    const score = similarity(text.trim().slice(0, 300), target)
    if (score > 0 && (best === undefined || score > best.score)) best = { line: index + 1, text: text.trimEnd(), score }
  })
  return best === undefined ? undefined : { line: best.line, text: best.text.slice(0, 200) }
}
