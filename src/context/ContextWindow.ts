import type { Prompt } from "@effect/ai"
import { Duration, Effect, FiberSet, Option, Ref } from "effect"
import type { SessionHistory } from "./SessionHistory.js"
import { SessionHistory as History } from "./SessionHistory.js"
import { messageOverheadTokens } from "./sentText.js"
import { sectionSeparator } from "./systemPrompt.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { type TokenCounter, Tokenizer } from "../model/tokenizer.js"
import { Embedder } from "../recall/Embedder.js"
import type { LoadedSession } from "../session/SessionStore.js"
import type { ReadFrom } from "../session/readSession.js"
import { breakdownOf, type ContextBreakdown } from "./breakdown.js"
import { type CatchUpChunk, makeCatchUp } from "./catchUp.js"
import { type Composition, type ContextPlan, holdFrom, makeState, planContext, type SessionState } from "./plan.js"
import { ContextCut, rawWindowStart, type Segment } from "./Segment.js"
import { segmentPass, type PassDeps } from "./segmentPass.js"
import { SegmentStore } from "./SegmentStore.js"
import { SegmentSummarizer } from "./Summarizer.js"
import { SummaryGate } from "./SummaryGate.js"
import { type SummarizerStatus, summarizerStatus } from "./summarizerStatus.js"
import { boxOf, wireOfConfig } from "../media/imageLimits.js"
import { keptSpan } from "../kernel/keptSpan.js"
import { waitAtMost } from "../config/waitAtMost.js"

/** How long a one-shot command waits for the context's background work before it exits. */
export const oneShotWait = Duration.seconds(30)

export interface PrepareInput {
  readonly sessionId: string
  readonly history: SessionHistory
  /** The system prompt without its conversation summary. */
  readonly system: string
  /** Tokens of the tool definitions offered. */
  readonly toolsTokens: number
  readonly modelId: string
  readonly progress: (line: string) => Effect.Effect<void>
}

export interface Prepared {
  /** The system prompt as sent: with the conversation summary when messages are trimmed. */
  readonly system: string
  /** The rendered `<conversation_summary>` in it; "" when nothing is trimmed. */
  readonly conversationSummary: string
  readonly prompt: Prompt.Prompt
  readonly breakdown: ContextBreakdown
  /** The whole request as we count it, before the calibration (what the provider's count is compared with). */
  readonly estimate: number
}

export type PreviewInput = Omit<PrepareInput, "progress">

/** The request the next model call would send: what the turn sends, planned the same way, with nothing moved. */
export type Preview = Prepared

/**
 * A report this far from our count is not a tokenizer's difference but a proxy's zero, a count of the uncached part
 * only, or a different request: it is ignored.
 */
const plausibleRatio = [0.5, 2] as const
/**
 * The correction stays within this. o200k_base is among the most frugal tokenizers, so models count about as many
 * tokens or more (Anthropic's ~10–20% more): a correction below 0.9 would let the window outgrow the model's.
 */
const ratioBounds = [0.9, 2] as const
/** Weight of a new observation in the moving ratio. */
const calibrationWeight = 0.3
/** Requests smaller than this say little about the ratio (fixed overheads dominate). */
const calibrationMinTokens = 2_000
/**
 * The context of a long-lived conversation: which messages are sent raw (from a cut that moves with hysteresis and
 * never passes the summarized segments), which summaries stand for the rest, and the background work that makes the
 * segments and summaries after turns. Holds a session's segment tree and cut in memory; kern.db keeps them.
 */
export class ContextWindow extends Effect.Service<ContextWindow>()("kern/context/ContextWindow", {
  dependencies: [Tokenizer.Default, SummaryGate.Default],
  scoped: Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const store = yield* SegmentStore
    const summarizer = yield* SegmentSummarizer
    const gate = yield* SummaryGate
    const embedder = yield* Embedder
    // The encoder is loaded when something is first counted, not when the context is built: opening a session, a
    // listing or a status needs no counts, and loading it costs more than opening a 10k-message session.
    const counter = (yield* Tokenizer).counter
    const states = yield* Ref.make(new Map<string, SessionState>())
    const calibrations = yield* Ref.make(new Map<string, number>())
    const lastBreakdowns = yield* Ref.make(new Map<string, ContextBreakdown>())
    // The sessions whose raw window is past their summaries: the fallback is announced when it starts and ends.
    const fallbacks = yield* Ref.make(new Set<string>())
    const background = yield* FiberSet.make()
    // One pass at a time: the background pass after a turn and a turn's own (hard-limit) pass never overlap.
    const passLock = yield* Effect.makeSemaphore(1)
    const summariesOn = config.summaryBudget > 0

    const warned = <A>(fallback: A) => (error: { readonly message: string }) =>
      Effect.as(Effect.logWarning(`kern: context: ${error.message}`), fallback)

    const stateOf = (sessionId: string) =>
      Effect.gen(function*() {
        const known = (yield* Ref.get(states)).get(sessionId)
        if (known !== undefined) return known
        const segments = yield* store.list(sessionId).pipe(Effect.catchAll(warned<ReadonlyArray<Segment>>([])))
        const cut = yield* store.getCut(sessionId).pipe(Effect.catchAll(warned(Option.none<ContextCut>())))
        const held = Option.match(cut, { onNone: () => 0, onSome: (c) => c.messageIndex })
        const state = makeState(segments, rawWindowStart(cut), held)
        yield* Ref.update(states, (map) => new Map(map).set(sessionId, state))
        // A fallback that outlived the last run was announced then: it is not again.
        if (state.cut > state.coveredEnd) yield* Ref.update(fallbacks, (set) => new Set(set).add(sessionId))
        return state
      })

    const setState = (sessionId: string, state: SessionState) => Ref.update(states, (map) => new Map(map).set(sessionId, state))

    /**
     * Sessions opened by a process that runs no catch-up of the summaries (a one-shot `kern chat`): one whose summaries
     * are far behind is held, and read next time, from its raw window only (`rawOnly`).
     */
    const rawOnlySessions = yield* Ref.make(new Set<string>())

    /**
     * Whether a raw window from `cut` leaves the summaries certainly more than a window behind: the messages between
     * them take `messageOverheadTokens` each at least. Then no turn summarizes in its own time (the backlog is over a
     * window, SessionHistory.exceeds) and only a catch-up needs the messages before the cut.
     */
    const farBehindFrom = (cut: number, covered: number) =>
      summariesOn && (cut - covered) * messageOverheadTokens > config.maxContextTokens

    /**
     * Where a session may be read from: its persisted cut, when there is one. A cut past the summarized messages (the
     * raw window itself, stored by a one-shot process: `rawOnly`) is read from only by such a process while the
     * summaries are still far behind it; any other reads the whole session, as its catch-up needs the messages before.
     */
    const readFrom = (sessionId: string, rawOnly: boolean): Effect.Effect<Option.Option<ReadFrom>> =>
      Effect.gen(function*() {
        if (rawOnly) yield* Ref.update(rawOnlySessions, (set) => new Set(set).add(sessionId))
        const stored = yield* store.getCut(sessionId).pipe(
          Effect.map(Option.filter((cut) => cut.messageIndex > 0 && cut.byteOffset > 0)),
          Effect.catchAll(warned(Option.none<ContextCut>()))
        )
        if (Option.isNone(stored) || !summariesOn) return stored
        const { coveredEnd: covered } = yield* stateOf(sessionId)
        if (stored.value.messageIndex <= covered) return stored
        return rawOnly && farBehindFrom(stored.value.messageIndex, covered) ? stored : Option.none()
      })

    const cutOf = (sessionId: string) => readFrom(sessionId, false)

    /** cutOf for a process that runs no catch-up of the summaries (a one-shot `kern chat`). */
    const rawCutOf = (sessionId: string) => readFrom(sessionId, true)

    /** The in-memory history of a loaded session, counted as the context counts it. */
    const historyOf = (loaded: LoadedSession) =>
      History.make(loaded.messages, {
        sessionId: loaded.id,
        base: loaded.firstIndex,
        maxToolResultChars: config.maxToolResultChars,
        count: counter,
        positions: loaded.positions,
        imageBox: boxOf(wireOfConfig(config), config.provider)
      })

    const calibrationOf = (modelId: string) =>
      Effect.gen(function*() {
        const known = (yield* Ref.get(calibrations)).get(modelId)
        if (known !== undefined) return known
        const stored = yield* store.getCalibration(modelId).pipe(Effect.catchAll(warned(Option.none<number>())))
        const ratio = Option.getOrElse(stored, () => 1)
        yield* Ref.update(calibrations, (map) => new Map(map).set(modelId, ratio))
        return ratio
      })

    /** Learns the model's count against ours from a request's reported input tokens. */
    const calibrate = (modelId: string, estimate: number, reported: number) =>
      Effect.gen(function*() {
        const observed = reported / estimate
        if (estimate < calibrationMinTokens || observed < plausibleRatio[0] || observed > plausibleRatio[1]) return
        const old = yield* calibrationOf(modelId)
        const ratio = Math.min(ratioBounds[1], Math.max(ratioBounds[0], old + calibrationWeight * (observed - old)))
        yield* Ref.update(calibrations, (map) => new Map(map).set(modelId, ratio))
        yield* store.setCalibration(modelId, ratio).pipe(Effect.catchAll(warned(undefined)))
      })

    const passDeps = (progress: PassDeps["progress"], count: TokenCounter): PassDeps => ({
      store,
      summarizer,
      gate,
      embedder,
      count,
      maxToolResultChars: config.maxToolResultChars,
      progress
    })

    /**
     * One segmentation/summary/rollup pass over a session, its state refreshed after in one update: the cut a turn
     * moved meanwhile is kept, never put back.
     */
    const pass = (sessionId: string, history: SessionHistory, force: boolean, progress: PassDeps["progress"], chunk?: CatchUpChunk) =>
      Effect.gen(function*() {
        const segments = yield* segmentPass(passDeps(progress, yield* counter), sessionId, history, { force, ...chunk })
        const planned = yield* stateOf(sessionId)
        yield* Ref.update(states, (map) => {
          const now = map.get(sessionId) ?? planned
          return new Map(map).set(sessionId, makeState(segments, now.cut, now.held))
        })
      }).pipe(Effect.catchAll(warned(undefined)))

    const runPass = (sessionId: string, history: SessionHistory, force: boolean, progress: PassDeps["progress"], chunk?: CatchUpChunk) =>
      passLock.withPermits(1)(pass(sessionId, history, force, progress, chunk))

    /**
     * Whether the held messages no summary covers (what a pass would have to summarize) take more than a window. A
     * turn waits for that only up to a window's worth (a turn that outgrew the window); a longer backlog (a long
     * session kern never summarized, summaries far behind after an outage) is summarized in the background by
     * `catchUp` instead. Counted from the newest message back, only until the answer is known.
     */
    const backlogOverWindow = (state: SessionState, history: SessionHistory) =>
      history.exceeds(state.coveredEnd, config.maxContextTokens)

    /**
     * Keeps what a plan made of the state: the cut, and the composition while the segments it was made from are
     * still the session's (a background pass may have replaced them since).
     */
    const keep = (sessionId: string, planned: SessionState, cut: number, held: number, composition: Composition | undefined) =>
      Ref.update(states, (map) => {
        const now = map.get(sessionId) ?? planned
        return new Map(map).set(sessionId, {
          ...now,
          cut,
          held,
          composition: now.segments === planned.segments ? composition : undefined
        })
      })

    /**
     * Moves the cut: persisted with where its line is, and the messages before it let go. A fallback cut past the
     * summarized messages holds (and stores) the session from their end instead, so the summaries can catch up.
     */
    const moveCut = (sessionId: string, history: SessionHistory, state: SessionState, cut: number, from: number) =>
      Effect.gen(function*() {
        if (cut === state.cut && from === state.held) return
        const line = history.at(from)
        if (line !== undefined) {
          yield* store.setCut(new ContextCut({
            sessionId,
            messageIndex: from,
            byteOffset: line.position.byteOffset,
            linesBefore: line.position.linesBefore,
            at: line.message.at,
            ...(cut > from ? { rawStart: cut } : {})
          })).pipe(Effect.catchAll(warned(undefined)))
        }
        yield* history.dropBefore(from)
      })

    /** Says once when a session's raw window goes past its summaries, and once when the summaries have caught up. */
    const announce = (sessionId: string, planned: ContextPlan, progress: PrepareInput["progress"]) =>
      Effect.gen(function*() {
        const known = (yield* Ref.get(fallbacks)).has(sessionId)
        if (planned.fallback === known) return
        yield* Ref.update(fallbacks, (set) => {
          const next = new Set(set)
          if (planned.fallback) next.add(sessionId)
          else next.delete(sessionId)
          return next
        })
        if (!planned.fallback) {
          return yield* Effect.logInfo(`kern: context: the summaries of session ${sessionId} caught up; the fallback cut has ended`)
        }
        const health = yield* gate.health
        const why = health.consecutiveFailures > 0
          ? `the summary model is failing (${health.lastError ?? "no answer"})`
          : "the summaries are behind"
        const line = `${why}: to fit the context window, older messages are cut at user messages (from message ` +
          `${planned.cut} on; recall still finds the rest) until the summaries catch up; \`kern status\` shows them`
        yield* Effect.logWarning(`kern: context: session ${sessionId}: ${line}`)
        yield* progress(line)
      })

    // A plan reads the counts from the stored cut on (planContext: the cut only moves on from there).
    const plan = (input: PrepareInput, state: SessionState, ratio: number, fallback: boolean) =>
      Effect.zipWith(input.history.windowFrom(state.cut), counter, (window, count) =>
        planContext({ config, state, window, system: input.system, toolsTokens: input.toolsTokens, ratio, count, fallback }))

    /**
     * The request a plan makes: the system prompt with the conversation summary when messages are trimmed, the raw
     * messages from the cut, and its breakdown. The turn sends it (`send`); a preview builds the same request without
     * touching the history's live prompt, which a running model call may be reading.
     */
    const requestOf = (input: PreviewInput, planned: ContextPlan, ratio: number, use: "send" | "preview") =>
      Effect.gen(function*() {
        const system = planned.block === "" ? input.system : `${input.system}${sectionSeparator}${planned.block}`
        const prompt = yield* (use === "send" ? input.history.prompt(system, planned.cut) : input.history.promptCopy(system, planned.cut))
        const breakdown = breakdownOf(input.sessionId, yield* input.history.size, planned, input.toolsTokens, ratio)
        return { system, conversationSummary: planned.block, prompt, breakdown, estimate: planned.estimate } satisfies Prepared
      })

    /**
     * The prompt of the next model call: the system prompt with the conversation summary when messages are trimmed,
     * then the raw messages from the cut. When the request would still exceed maxContextTokens (the summaries lag
     * behind), the overflow is segmented and summarized first, in the turn, with a progress line, while the summary
     * model works; when it fails (or is waiting out its backoff), the window is cut at user messages instead
     * (announced once): the request never outgrows maxContextTokens because of the summaries.
     */
    const prepare = (input: PrepareInput): Effect.Effect<Prepared> =>
      Effect.gen(function*() {
        const ratio = yield* calibrationOf(input.modelId)
        let state = yield* stateOf(input.sessionId)
        let planned = yield* plan(input, state, ratio, false)
        if (planned.estimate * ratio > config.maxContextTokens && summariesOn) {
          // A turn waits for at most a window's worth of summaries (it outgrew the window itself).
          const small = !(yield* backlogOverWindow(state, input.history))
          if (small && (yield* gate.admission) === "open") {
            // Never behind the background catch-up: while it holds the pass lock the turn is cut at user messages.
            const ran = yield* passLock.withPermitsIfAvailable(1)(Effect.gen(function*() {
              yield* input.progress(
                `the conversation outgrew the context window (${Math.round(planned.estimate * ratio)} of ` +
                  `${config.maxContextTokens} tokens): summarizing older messages first`
              )
              yield* pass(input.sessionId, input.history, true, input.progress)
            }))
            if (Option.isSome(ran)) state = yield* stateOf(input.sessionId)
          }
          planned = yield* plan(input, state, ratio, true)
        }
        yield* announce(input.sessionId, planned, input.progress)
        // Without summaries nothing needs the messages before the cut; nor does a process that runs no catch-up when the
        // summaries are far behind it (readFrom).
        const rawOnly = (yield* Ref.get(rawOnlySessions)).has(input.sessionId) && farBehindFrom(planned.cut, state.coveredEnd)
        const from = rawOnly
          ? planned.cut
          : holdFrom(yield* input.history.windowFrom(planned.cut), planned.cut, summariesOn ? state.coveredEnd : planned.cut)
        yield* moveCut(input.sessionId, input.history, state, planned.cut, from)
        yield* keep(input.sessionId, state, planned.cut, from, planned.composition)
        const request = yield* requestOf(input, planned, ratio, "send")
        yield* Ref.update(lastBreakdowns, (map) => new Map(map).set(input.sessionId, request.breakdown))
        return request
      }).pipe(keptSpan("kern.context.prepare", { attributes: { sessionId: input.sessionId } }))

    /**
     * The request the next model call would send, planned as `prepare` plans it, with nothing moved or summarized (so
     * with the fallback cut where prepare would summarize first only while the summary model is not failing): the
     * web UI's and `kern context show`'s "next request", built by the same `requestOf` as the turn's.
     */
    const preview = (input: PreviewInput): Effect.Effect<Preview> =>
      Effect.gen(function*() {
        const ratio = yield* calibrationOf(input.modelId)
        const fallback = (yield* gate.admission) !== "open"
        const planned = yield* plan({ ...input, progress: () => Effect.void }, yield* stateOf(input.sessionId), ratio, fallback)
        return yield* requestOf(input, planned, ratio, "preview")
      }).pipe(Effect.withSpan("kern.context.preview", { attributes: { sessionId: input.sessionId } }))

    const debugLine = (line: string) => Effect.logDebug(`kern: ${line}`)

    // Sessions whose summaries are far behind, summarized by `catchUp`, which only a long-lived agent runs.
    const { catchUp, catchUpQueued, caughtUp, enqueue } = yield* makeCatchUp({
      stateOf,
      pass: (sessionId, history, chunk) => runPass(sessionId, history, true, debugLine, chunk)
    })

    /**
     * After a turn: segments, summaries and rollups in the background; the turn never waits for them. A session whose
     * summaries are behind its raw window (the fallback cut) goes to `catchUp` instead, which a long-lived agent runs
     * and a one-shot command does not (the next long-lived agent does it: a backlog is many summary calls).
     */
    const afterTurn = (sessionId: string, history: SessionHistory) =>
      !summariesOn ? Effect.void : Effect.gen(function*() {
        const state = yield* stateOf(sessionId)
        if (yield* farBehind(state, history)) return yield* enqueue(sessionId, history)
        // While the fallback cut is in effect every message up to the turn's end is segmented (not only once enough
        // gathered), so the summaries can reach the raw window and end it.
        yield* FiberSet.run(background, runPass(sessionId, history, state.cut > state.coveredEnd, debugLine))
      })

    /** Summaries behind the raw window by more than a window's worth: the catch-up's work, not a turn's. */
    const farBehind = (state: SessionState, history: SessionHistory) =>
      state.cut > state.coveredEnd
        ? backlogOverWindow(state, history)
        : Effect.succeed(false)

    /** Queues a session for the catch-up when its summaries are behind its raw window (a long-lived agent's start). */
    const resume = (sessionId: string, history: SessionHistory) =>
      !summariesOn ? Effect.void : Effect.gen(function*() {
        const state = yield* stateOf(sessionId)
        if (state.cut > state.coveredEnd) yield* enqueue(sessionId, history)
      })

    /** Waits, at most `limit`, for background passes (a one-shot command before it exits). */
    const settled = (limit: Duration.DurationInput = oneShotWait) =>
      Effect.asVoid(waitAtMost(FiberSet.awaitEmpty(background), limit))

    const segments = (sessionId: string) => Effect.map(stateOf(sessionId), (state) => state.segments)

    /** Where the session's raw window starts, as last stored. */
    const storedCut = (sessionId: string) => Effect.map(stateOf(sessionId), (state) => state.cut)

    /** The context of the session's last model call in this process, if there was one. */
    const lastBreakdown = (sessionId: string) =>
      Effect.map(Ref.get(lastBreakdowns), (map) => Option.fromNullable(map.get(sessionId)))

    /**
     * Forgets a session's segments and cut and makes them again from its messages (`kern segments rebuild`): the
     * history must hold the whole session.
     */
    const rebuild = (sessionId: string, history: SessionHistory, progress: PassDeps["progress"]) =>
      Effect.gen(function*() {
        yield* store.clear(sessionId)
        yield* setState(sessionId, makeState([], 0))
        // The operator asked for summaries now: a failing model is tried once at once rather than after its wait.
        yield* gate.retryNow
        yield* runPass(sessionId, history, true, progress)
        return (yield* stateOf(sessionId)).segments
      })

    /** The summarizer's state for a session's status: its health, the messages no summary covers yet, the fallback. */
    const summaryStatus = (sessionId: string, messages: number): Effect.Effect<SummarizerStatus> =>
      Effect.gen(function*() {
        const state = yield* stateOf(sessionId)
        return summarizerStatus({
          enabled: summariesOn,
          health: yield* gate.health,
          sessionId,
          messages,
          coveredEnd: state.coveredEnd,
          fallback: state.cut > state.coveredEnd
        })
      })

    return {
      prepare,
      preview,
      afterTurn,
      catchUp,
      catchUpQueued,
      caughtUp,
      resume,
      settled,
      calibrate,
      cutOf,
      rawCutOf,
      historyOf,
      segments,
      storedCut,
      lastBreakdown,
      rebuild,
      counter,
      summaryStatus
    } as const
  })
}) {}
