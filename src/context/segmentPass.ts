import { Clock, Effect, LogLevel, Option, Ref } from "effect"
import type { SessionHistory } from "./SessionHistory.js"
import type { TokenCounter } from "../model/tokenizer.js"
import type { EmbedderShape } from "../recall/Embedder.js"
import type { SessionMessage } from "../session/messages.js"
import { planRollups } from "./rollup.js"
import { type NewSegment, type Segment, summaryTargetTokens } from "./Segment.js"
import { planSegments, segmentationDue, turnEdgeSimilarity } from "./segmentation.js"
import type { SegmentStoreShape } from "./SegmentStore.js"
import { sentText } from "./sentText.js"
import type { SummaryGate } from "./SummaryGate.js"
import type { SegmentSummarizerShape } from "./Summarizer.js"
import { keptSpan } from "../kernel/keptSpan.js"

/** Summaries written at once. */
export const summaryConcurrency = 3

/** Characters of a turn's text embedded to find topic shifts (its start says what it is about). */
const turnSampleChars = 2_000

export interface PassDeps {
  readonly store: SegmentStoreShape
  readonly summarizer: SegmentSummarizerShape
  /** Whether a summary may be asked for now, and what each outcome teaches it (the backoff of a failing model). */
  readonly gate: Pick<SummaryGate, "admission" | "succeeded" | "failed">
  readonly embedder: EmbedderShape
  readonly count: TokenCounter
  readonly maxToolResultChars: number
  /** A line for the operator as the work goes (the turn's progress when it waits for the pass). */
  readonly progress: (line: string) => Effect.Effect<void>
}

/** Where the L0 segments end: the first message segmentation has not reached. */
export const segmentedEnd = (segments: ReadonlyArray<Segment>): number => {
  let end = 0
  for (const segment of segments) if (segment.level === 0 && segment.end > end) end = segment.end
  return end
}

/**
 * The similarity across each user-message edge of the messages: the turns before it against the turns after it, by
 * their embeddings (the start of each turn's text). None when there is no embedding model or it fails (segmentation then cuts by size).
 */
const edgeSimilarity = (
  deps: PassDeps,
  messages: ReadonlyArray<SessionMessage>
): Effect.Effect<Option.Option<ReadonlyArray<number | undefined>>> => {
  if (Option.isNone(deps.embedder.model)) return Effect.succeed(Option.none())
  const starts: Array<number> = []
  messages.forEach((message, i) => {
    if (message._tag === "user") starts.push(i)
  })
  if (starts.length < 2) return Effect.succeed(Option.none())
  const texts = starts.map((start, k) => {
    const end = starts[k + 1] ?? messages.length
    let text = ""
    for (let i = start; i < end && text.length < turnSampleChars; i++) {
      text += `${sentText(messages[i]!, turnSampleChars)}\n`
    }
    return text.slice(0, turnSampleChars)
  })
  return deps.embedder.embed(texts).pipe(
    Effect.map((vectors) => Option.some(turnEdgeSimilarity(messages.length, starts, vectors))),
    Effect.catchAll((error) =>
      Effect.as(Effect.logWarning(`kern: segments cut by size (embeddings failed: ${error.message})`), Option.none())
    )
  )
}

/**
 * Cuts the unsegmented messages into L0 segments, when enough have gathered (or `force`: the turn needs the room
 * now). Only held messages can be segmented: the cut never passes the segmented end, so they are.
 */
const segmentNew = (
  deps: PassDeps,
  sessionId: string,
  history: SessionHistory,
  segments: ReadonlyArray<Segment>,
  force: boolean,
  until: number | undefined
) =>
  Effect.gen(function*() {
    const from = segmentedEnd(segments)
    const first = yield* history.first
    const size = force && until !== undefined ? Math.min(until, yield* history.size) : yield* history.size
    if (from < first || from >= size) return []
    // Counted from the first unsegmented message on: those before it are segmented already.
    const window = yield* history.windowFrom(from)
    const messages = history.slice(from, size)
    const planned = messages.map((message, i) => ({ tokens: window.tokens[from - first + i]!, isUser: message._tag === "user" }))
    const tokens = planned.reduce((sum, message) => sum + message.tokens, 0)
    if (!force && !segmentationDue(planned.length, tokens)) return []
    const similarity = yield* edgeSimilarity(deps, messages)
    const pieces = planSegments(planned, Option.getOrUndefined(similarity))
    if (pieces.length === 0) return []
    const fresh: Array<NewSegment> = pieces.map((piece) => ({
      level: 0,
      start: from + piece.start,
      end: from + piece.end,
      tokens: piece.tokens,
      firstAt: messages[piece.start]!.at,
      lastAt: messages[piece.end - 1]!.at,
      summary: null,
      summaryTokens: 0
    }))
    return yield* deps.store.insert(sessionId, fresh)
  })

/**
 * Writes the summary of one segment, when the gate lets a summary be asked for; a failure leaves it without one, for
 * a later pass to retry, and closes the gate for the backoff. Answers whether the summary was written.
 */
const summarizeOne = (deps: PassDeps, history: SessionHistory, segment: Segment, children: ReadonlyArray<Segment>) =>
  Effect.gen(function*() {
    if ((yield* deps.gate.admission) === "closed") return false
    const first = yield* history.first
    if (segment.level === 0 && segment.start < first) {
      yield* Effect.logWarning(
        `kern: segment ${segment.start}-${segment.end - 1} is before the messages held; \`kern segments rebuild\` summarizes it`
      )
      return false
    }
    const text = yield* deps.summarizer.summarize({
      level: segment.level,
      start: segment.start,
      end: segment.end,
      ...(segment.level === 0 ? { messages: history.slice(segment.start, segment.end) } : { children }),
      targetTokens: summaryTargetTokens(segment.tokens)
    })
    yield* deps.gate.succeeded
    const tokens = deps.count(text)
    yield* deps.store.setSummary(segment.id, text, tokens)
    yield* Effect.logDebug(`context: summarized segment L${segment.level} ${segment.start}-${segment.end - 1} in ${tokens} tokens`).pipe(
      Effect.annotateLogs({ segment: segment.id, level: segment.level, summaryTokens: tokens })
    )
    return true
  }).pipe(
    Effect.catchTag("SummarizeError", (error) =>
      Effect.zipRight(
        deps.gate.failed(error.message),
        Effect.as(
          Effect.logDebug(`kern: segment ${segment.start}-${segment.end - 1} not summarized (retried later): ${error.message}`),
          false
        )
      ))
  )

/**
 * One pass of the context's background work for a session: new L0 segments, summaries of those without one (L0
 * first, in order, a few at a time), then rollups (10 summarized roots of a level → one parent, summarized) until
 * nothing more rolls up. Answers the session's segments as they are after it.
 */
export const segmentPass = (
  deps: PassDeps,
  sessionId: string,
  history: SessionHistory,
  options: {
    readonly force: boolean
    /** Summaries of pending segments written at most in this pass (the background catch-up's chunk); all by default. */
    readonly limit?: number | undefined
    /** With `force`: the messages from here on are left for a later pass (the catch-up leaves the latest turn). */
    readonly until?: number | undefined
  }
) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    let rolledUp = 0
    let summarized = 0
    let segments = yield* deps.store.list(sessionId)
    const added = yield* segmentNew(deps, sessionId, history, segments, options.force, options.until)
    if (added.length > 0) segments = yield* deps.store.list(sessionId)
    const childrenOf = (parent: Segment) => segments.filter((segment) => segment.parentId === parent.id)
    const pending = segments.filter((segment) => segment.summary === null).slice(0, options.limit ?? Infinity)
    const admitted = pending.length === 0 ? "closed" : yield* deps.gate.admission
    if (admitted !== "closed") {
      const done = yield* Ref.make(0)
      const one = (segment: Segment) =>
        Effect.tap(
          summarizeOne(deps, history, segment, childrenOf(segment)),
          (written) =>
            written
              ? Effect.flatMap(Ref.updateAndGet(done, (n) => n + 1), (n) => deps.progress(`summarized ${n} of ${pending.length}`))
              : Effect.void
        )
      yield* deps.progress(`summarizing ${pending.length} segment${pending.length === 1 ? "" : "s"} of the conversation…`)
      // A model that failed before is asked once, alone: only when it answers are the others asked for.
      const probed = admitted === "probe" ? yield* one(pending[0]!) : true
      const rest = admitted === "probe" ? pending.slice(1) : pending
      if (probed) yield* Effect.forEach(rest, one, { concurrency: summaryConcurrency, discard: true })
      summarized = yield* Ref.get(done)
      segments = yield* deps.store.list(sessionId)
    }
    for (;;) {
      const plans = planRollups(segments)
      if (plans.length === 0) break
      for (const plan of plans) {
        const children = plan.children
        const parent = yield* deps.store.insertParent(sessionId, {
          level: plan.level,
          start: children[0]!.start,
          end: children[children.length - 1]!.end,
          tokens: children.reduce((sum, child) => sum + child.tokens, 0),
          firstAt: children[0]!.firstAt,
          lastAt: children[children.length - 1]!.lastAt,
          summary: null,
          summaryTokens: 0
        }, children.map((child) => child.id))
        yield* summarizeOne(deps, history, parent, children)
        rolledUp++
      }
      // A parent whose summary failed stays unsummarized, so it does not roll up again: the loop ends.
      segments = yield* deps.store.list(sessionId)
    }
    if (added.length > 0 || pending.length > 0 || rolledUp > 0) {
      const durationMs = (yield* Clock.currentTimeMillis) - started
      const left = admitted === "closed" ? 0 : pending.length - summarized
      // A pass that only finds the summaries paused (the model failing) is noise after every turn: debug.
      const level = left > 0 ? LogLevel.Warning : added.length + summarized + rolledUp > 0 ? LogLevel.Info : LogLevel.Debug
      yield* Effect.logWithLevel(
        level,
        `context: summarizer pass in ${durationMs} ms: ${added.length} new segment(s), ${summarized} of ${pending.length} summarized` +
          `${left > 0 ? ` (${left} left for a later pass)` : admitted === "closed" && pending.length > 0 ? " (summaries paused after failures)" : ""}` +
          `${rolledUp > 0 ? `, ${rolledUp} rolled up` : ""}`
      ).pipe(Effect.annotateLogs({ session: sessionId, durationMs, newSegments: added.length, summarized, pending: pending.length, rolledUp }))
    }
    return segments
  }).pipe(keptSpan("kern.context.segmentPass", { attributes: { sessionId } }))
