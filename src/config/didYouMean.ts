/**
 * The known name a mistyped one most likely meant: a command, a subcommand, a flag or a config key. Case is ignored
 * and a swapped pair of letters counts as one edit (`stauts` → `status`); a short word may be one edit away, a longer
 * one two. None when nothing is that close, or when two names are equally close (a guess between them would mislead).
 */
export const didYouMean = (word: string, known: Iterable<string>): string | undefined => {
  const typed = word.toLowerCase()
  const limit = typed.length <= 4 ? 1 : 2
  let best: string | undefined
  let bestDistance = limit + 1
  let tied = false
  for (const candidate of known) {
    const distance = editDistance(typed, candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
      tied = false
    } else if (distance === bestDistance && candidate !== best) {
      tied = true
    }
  }
  return best !== undefined && !tied ? best : undefined
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps, each one edit. */
const editDistance = (a: string, b: string): number => {
  if (Math.abs(a.length - b.length) > 2) return Math.abs(a.length - b.length)
  const rows: Array<Array<number>> = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = value
    }
  }
  return rows[a.length]![b.length]!
}
