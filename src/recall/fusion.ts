/** The constant of reciprocal rank fusion: a rank r in a list contributes 1 / (k + r). */
export const rrfK = 60

/**
 * Reciprocal rank fusion of ranked id lists (best first): each id scores the sum of 1 / (k + rank) over the lists
 * it appears in (rank from 1). Returns ids best first; ties keep the order of first appearance.
 */
export const reciprocalRankFusion = (
  lists: ReadonlyArray<ReadonlyArray<number>>,
  k = rrfK
): Array<{ readonly id: number; readonly score: number }> => {
  const scores = new Map<number, number>()
  for (const list of lists) {
    list.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + rank + 1)))
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score)
}

/** Whether an inclusive message range overlaps any excluded range of the same session. */
export const isExcluded = (
  chunk: { readonly sessionId: string | null; readonly messageStart: number; readonly messageEnd: number },
  exclude: ReadonlyArray<{ readonly sessionId: string; readonly messageStart: number; readonly messageEnd: number }>
): boolean =>
  chunk.sessionId !== null &&
  exclude.some((range) =>
    range.sessionId === chunk.sessionId && chunk.messageStart <= range.messageEnd && chunk.messageEnd >= range.messageStart
  )

/** A date bound as milliseconds: a bare date `before` covers that whole day (UTC). */
export const boundMs = (text: string | undefined, side: "after" | "before"): number | undefined => {
  if (text === undefined) return undefined
  const ms = Date.parse(text)
  return side === "before" && /^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? ms + 86_399_999 : ms
}
