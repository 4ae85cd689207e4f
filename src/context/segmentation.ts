import { segmentation } from "./Segment.js"

/** What segmentation needs of a message: its tokens as sent and whether a turn starts there. */
export interface SegmentableMessage {
  readonly tokens: number
  readonly isUser: boolean
}

/** One planned L0 segment: messages [start, end) of the array given, `tokens` their sum. */
export interface PlannedSegment {
  readonly start: number
  readonly end: number
  readonly tokens: number
}

/** Whether enough is unsegmented to run at all (≥ triggerMessages and ≥ triggerTokens). */
export const segmentationDue = (messages: number, tokens: number): boolean =>
  messages >= segmentation.triggerMessages && tokens >= segmentation.triggerTokens

/**
 * How much closeness to the target weighs against a topic shift: an edge at the far end of the allowed range (min or
 * max) must be this much less similar than one at the target to win. Cosine similarities of neighbouring turns on
 * one topic and across a topic shift differ by 0.1–0.3, so a real shift wins while near-ties go to the target size.
 */
const targetPull = 0.05

const { targetTokens, minTokens, minMessages, maxTokens } = segmentation

/**
 * Where to cut the unsegmented messages into L0 segments (indices relative to the array; contiguous from 0).
 * `similarity[i]`, when given, is the embedding similarity between the text before edge i and after it (edge i =
 * between message i-1 and i; only user-message edges need a value; NaN/undefined = unknown).
 *
 * It does not check `segmentationDue` itself: the caller does, and skips that check when a turn needs the room now
 * (its `force`). What it guarantees:
 * - segments are contiguous from 0; a last piece too small to stand alone joins the previous segment when that stays
 *   ≤ maxTokens, else it stays unsegmented (the result then ends before `messages.length`, for a later run);
 * - a segment never exceeds maxTokens, except a single message that alone does (it is its own segment, so one
 *   oversized message never blocks segmentation);
 * - a segment is ≥ minTokens and ≥ minMessages except where maxTokens forbids it: one followed by a message that
 *   would take it over maxTokens (e.g. the one before an oversized message), or one whose first minMessages messages
 *   already exceed maxTokens;
 * - a segment starts at a user message whenever one lies in the allowed range; a long tool-heavy turn without one is
 *   split at the message edge nearest after the target.
 *
 * Linear in the messages: prefix sums and two pointers that only move forward.
 */
export const planSegments = (
  messages: ReadonlyArray<SegmentableMessage>,
  similarity?: ReadonlyArray<number | undefined>
): ReadonlyArray<PlannedSegment> => {
  const n = messages.length
  const prefix = new Float64Array(n + 1)
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i]! + messages[i]!.tokens
  const span = (start: number, end: number) => prefix[end]! - prefix[start]!
  const small = (start: number, end: number) => span(start, end) < minTokens || end - start < minMessages

  const out: Array<PlannedSegment> = []
  const push = (start: number, end: number) => out.push({ start, end, tokens: span(start, end) })
  /** Joins [start, end) to the previous segment when that stays within maxTokens. */
  const mergeBack = (start: number, end: number): boolean => {
    const last = out[out.length - 1]
    if (last === undefined || last.end !== start || last.tokens + span(start, end) > maxTokens) return false
    out[out.length - 1] = { start: last.start, end, tokens: last.tokens + span(start, end) }
    return true
  }

  // hi: the largest end keeping [s, hi) ≤ maxTokens; never moves back as s advances, so the scan stays linear.
  let hi = 0
  let s = 0
  while (s < n) {
    if (messages[s]!.tokens > maxTokens) {
      push(s, s + 1)
      s += 1
      continue
    }
    if (span(s, n) <= targetTokens) {
      // The rest is one piece: it stands alone if big enough, else joins the previous one or waits for more.
      if (small(s, n)) mergeBack(s, n)
      else push(s, n)
      break
    }
    if (hi < s + 1) hi = s + 1
    while (hi < n && span(s, hi + 1) <= maxTokens) hi += 1
    const end = chooseEnd(messages, similarity, span, s, hi, n)
    if (!small(s, end)) push(s, end)
    else if (end === n) {
      // Small only because the messages ran out: a tail, which waits for more unless the previous segment takes it.
      mergeBack(s, end)
      break
    } else if (!mergeBack(s, end)) {
      // Forced small by maxTokens (the next message would overflow it): it stands alone rather than block the rest.
      push(s, end)
    }
    s = end
  }
  return out
}

/**
 * The end of the segment starting at `s`, with `hi` the largest end within maxTokens. Candidates are edges that
 * leave the segment ≥ minTokens and ≥ minMessages (only ≥ minTokens when both cannot hold within maxTokens). User
 * edges first, preferring those whose remainder can stand alone as a segment (else it would only be merged back or
 * left over); with no user edge, the first message edge at or past the target; no room at all → `hi`.
 */
const chooseEnd = (
  messages: ReadonlyArray<SegmentableMessage>,
  similarity: ReadonlyArray<number | undefined> | undefined,
  span: (start: number, end: number) => number,
  s: number,
  hi: number,
  n: number
): number => {
  let lo = s + minMessages
  while (lo <= hi && span(s, lo) < minTokens) lo += 1
  if (lo > hi) {
    lo = s + 1
    while (lo <= hi && span(s, lo) < minTokens) lo += 1
    if (lo > hi) return hi
  }
  const standsAlone = (e: number) => e === n || (span(e, n) >= minTokens && n - e >= minMessages)
  const users: Array<number> = []
  for (let e = lo; e <= hi && e < n; e++) if (messages[e]!.isUser) users.push(e)
  const viable = users.filter(standsAlone)
  if (users.length > 0) {
    // Everything left fits in one segment and no turn edge leaves a piece that can stand: keep it whole.
    if (viable.length === 0 && hi === n) return n
    return pickEdge(viable.length > 0 ? viable : users, similarity, span, s)
  }
  // No turn edge in range (one long tool-heavy turn): any message edge, the first at or past the target.
  for (let e = lo; e <= hi; e++) if (span(s, e) >= targetTokens && (hi < n || standsAlone(e))) return e
  return hi
}

/**
 * Among candidate edges (ascending): with similarities, the lowest one (a topic shift) pulled towards the target
 * size; without any, the first at or after the target, else the last (the closest below it).
 */
const pickEdge = (
  pool: ReadonlyArray<number>,
  similarity: ReadonlyArray<number | undefined> | undefined,
  span: (start: number, end: number) => number,
  s: number
): number => {
  const known = (e: number): number | undefined => {
    const value = similarity?.[e]
    return value === undefined || Number.isNaN(value) ? undefined : value
  }
  let highest = Number.NEGATIVE_INFINITY
  for (const e of pool) {
    const value = known(e)
    if (value !== undefined && value > highest) highest = value
  }
  if (highest === Number.NEGATIVE_INFINITY) {
    for (const e of pool) if (span(s, e) >= targetTokens) return e
    return pool[pool.length - 1]!
  }
  let best = pool[0]!
  let bestScore = Number.POSITIVE_INFINITY
  for (const e of pool) {
    // An edge with no similarity is no evidence of a shift: it counts as the least shift seen among the others.
    const score = (known(e) ?? highest) + targetPull * Math.abs(span(s, e) - targetTokens) / targetTokens
    if (score < bestScore) {
      bestScore = score
      best = e
    }
  }
  return best
}

/** Cosine similarity of two vectors (0 when either is all zeros). */
export const cosine = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let dot = 0
  let na = 0
  let nb = 0
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

/**
 * The `similarity` input of `planSegments` from one embedding per turn: `turnStarts[k]` is the index of turn k's
 * user message (ascending) and `vectors[k]` its embedding. Edge `turnStarts[k]` gets the cosine between the mean of up
 * to `window` turns before it and the mean of up to `window` turns from it: a single short turn ("ok, thanks") says
 * little about the topic, neighbouring windows smooth that out. Other edges stay unknown.
 */
export const turnEdgeSimilarity = (
  messageCount: number,
  turnStarts: ReadonlyArray<number>,
  vectors: ReadonlyArray<ArrayLike<number>>,
  window = 2
): ReadonlyArray<number | undefined> => {
  const similarity: Array<number | undefined> = new Array(messageCount).fill(undefined)
  const turns = Math.min(turnStarts.length, vectors.length)
  if (turns < 2) return similarity
  const dimension = vectors[0]!.length
  const mean = (from: number, to: number): Float64Array => {
    const sum = new Float64Array(dimension)
    for (let k = from; k < to; k++) {
      const vector = vectors[k]!
      for (let i = 0; i < dimension; i++) sum[i] = sum[i]! + (vector[i] ?? 0)
    }
    return sum
  }
  for (let k = 1; k < turns; k++) {
    const edge = turnStarts[k]!
    if (edge >= 0 && edge < messageCount) {
      similarity[edge] = cosine(mean(Math.max(0, k - window), k), mean(k, Math.min(turns, k + window)))
    }
  }
  return similarity
}
