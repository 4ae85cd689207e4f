/** What the trim needs to place the cut: the held messages' sizes and where a cut may go. */
export interface TrimInput {
  /** Absolute index of the first message in `tokens`/`isUser` (messages before it are not held in memory). */
  readonly base: number
  /** Per message from base, as sent (after tool-result cuts). */
  readonly tokens: ReadonlyArray<number>
  readonly isUser: ReadonlyArray<boolean>
  /** Current cut (absolute; base ≤ cut ≤ base + tokens.length). */
  readonly cut: number
  /** The raw messages' budget. */
  readonly rawBudget: number
  /** Where the cut may go: L0 segment ends (absolute, ascending). */
  readonly segmentEnds: ReadonlyArray<number>
  /** The cut never passes this: the end of the contiguous summarized prefix of L0 segments. */
  readonly coveredEnd: number
}

/**
 * The share of the raw budget the raw messages take after the cut moves. Well under 1 so the cut then holds for
 * many turns: every move changes the prompt's prefix and so invalidates the provider's prompt cache.
 */
export const rawRefill = 0.6

/**
 * The new cut: the same while [cut, end) fits rawBudget (hysteresis); else moved so raw takes about 60% of it.
 *
 * A cut may only go where a segment ends (so the summaries before it and the raw messages after it meet without
 * overlap) and then back to the user message at or before that end (so a turn, and with it a tool call and its
 * result, is never split). Of those places after the current cut and not past `coveredEnd` (so every message stays
 * either raw or summarized), it takes the nearest one leaving raw ≤ rawRefill × rawBudget, else the farthest. None →
 * the cut stays and the raw window overshoots; the caller handles the hard limit.
 *
 * The rule "snap to the first segment end at or past the 60% point, then walk back" is refined in one way: when the
 * walk from that end falls back to or before the old cut or short of the 60% point, the next segment ends are tried,
 * so a turn with no user message in one segment does not stop the cut when a later segment end has one.
 *
 * One pass over the held messages after the cut and over the segment ends after it: no prefix sums needed.
 */
export const chooseCut = (input: TrimInput): number => {
  const { base, tokens, isUser, cut, rawBudget, segmentEnds, coveredEnd } = input
  const end = base + tokens.length
  let raw = 0
  for (let i = cut - base; i < tokens.length; i++) raw += tokens[i]!
  if (raw <= rawBudget) return cut

  // d: the first index from which the rest fits the refill share.
  const refill = rawRefill * rawBudget
  let d = cut
  let rest = raw
  while (d < end && rest > refill) {
    rest -= tokens[d - base]!
    d += 1
  }

  const limit = Math.min(coveredEnd, end)
  let k = firstAbove(segmentEnds, cut)
  // The user message at or before each candidate end, found by one forward scan (candidates ascend).
  let scan = cut + 1
  let lastUser = -1
  let best = cut
  for (; k < segmentEnds.length && segmentEnds[k]! <= limit; k++) {
    const candidate = segmentEnds[k]!
    // A cut at `end` would leave no raw message; the latest user message is as far as a cut goes.
    const reach = Math.min(candidate, end - 1)
    while (scan <= reach) {
      if (isUser[scan - base] === true) lastUser = scan
      scan += 1
    }
    if (lastUser > cut) {
      best = lastUser
      if (lastUser >= d) return lastUser
    }
  }
  return best
}

/** The index of the first value > `at` in ascending `values` (its length when none). */
const firstAbove = (values: ReadonlyArray<number>, at: number): number => {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (values[mid]! <= at) lo = mid + 1
    else hi = mid
  }
  return lo
}
