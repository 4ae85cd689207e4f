import type { HeldWindow } from "./SessionHistory.js"
import type { KernConfig } from "../config/schema.js"
import type { TokenCounter } from "../model/tokenizer.js"
import { type ContextBudget, contextBudget } from "./budget.js"
import { composeHistory, renderConversationSummary } from "./composeHistory.js"
import { coveredEnd, type Segment } from "./Segment.js"
import { chooseCut } from "./trim.js"

/** The summaries composed for a cut and a budget, rendered and counted: the same until either changes. */
export interface Composition {
  readonly key: string
  readonly chosen: ReadonlyArray<Segment>
  readonly uncovered: ReadonlyArray<{ readonly start: number; readonly end: number }>
  readonly block: string
  readonly tokens: number
}

/**
 * What the context knows of a session between turns: its segment tree, where its raw window starts, and what every
 * step would otherwise work out again from the tree (a long session's tree has hundreds of segments).
 */
export interface SessionState {
  readonly segments: ReadonlyArray<Segment>
  /** Where the raw window starts. */
  readonly cut: number
  /**
   * Where the session is held (and read) from, as stored: the cut, or the end of the summarized messages when the
   * fallback cut is past it (the summaries still need the messages in between).
   */
  readonly held: number
  /** Ends of the L0 segments, ascending. */
  readonly l0Ends: ReadonlyArray<number>
  readonly coveredEnd: number
  readonly composition?: Composition | undefined
}

export const makeState = (segments: ReadonlyArray<Segment>, cut: number, held: number = cut): SessionState => ({
  segments,
  cut,
  held,
  l0Ends: segments.filter((s) => s.level === 0).map((s) => s.end).sort((a, b) => a - b),
  coveredEnd: coveredEnd(segments)
})

export interface PlanInput {
  readonly config: Pick<KernConfig, "maxContextTokens" | "summaryBudget">
  readonly state: SessionState
  readonly window: HeldWindow
  /** The system prompt without its conversation summary. */
  readonly system: string
  readonly toolsTokens: number
  /** The model's count over ours. */
  readonly ratio: number
  readonly count: TokenCounter
  /**
   * When the plan would exceed maxContextTokens because too few messages are summarized, cut the raw window at user
   * messages past them instead (they stay in the session file and recall). Off only to learn whether the summaries
   * must catch up first.
   */
  readonly fallback: boolean
}

/** The context of the next model call, as planned: where the raw window starts and the summaries standing for the rest. */
export interface ContextPlan {
  readonly budget: ContextBudget
  readonly cut: number
  readonly chosen: ReadonlyArray<Segment>
  readonly uncovered: ReadonlyArray<{ readonly start: number; readonly end: number }>
  /** The rendered `<conversation_summary>`; "" when nothing is trimmed. */
  readonly block: string
  readonly systemTokens: number
  readonly summaryTokens: number
  readonly rawTokens: number
  /** The whole request as we count it (before the calibration). */
  readonly estimate: number
  /** The composition, for the state to keep. */
  readonly composition: Composition | undefined
  /** The raw window starts past the summarized messages: those in between are only in the session file and recall. */
  readonly fallback: boolean
}

const sumFrom = (values: ReadonlyArray<number>, from: number): number => {
  let total = 0
  for (let i = Math.max(0, from); i < values.length; i++) total += values[i]!
  return total
}

/** The summaries for [0, cut) within the budget: the state's when the cut and budget are the same, else composed anew. */
const compose = (state: SessionState, cut: number, budget: number, count: TokenCounter): Composition => {
  const key = `${cut}:${budget}`
  if (state.composition !== undefined && state.composition.key === key) return state.composition
  const composed = composeHistory(state.segments, cut, budget)
  const block = composed.chosen.length === 0 ? "" : renderConversationSummary(composed.chosen)
  return { key, chosen: composed.chosen, uncovered: composed.uncovered, block, tokens: block === "" ? 0 : count(block) }
}

/**
 * The absolute indices of the held user messages after `cut`: where a cut at user messages may go (chooseCut looks at
 * none at or before the current cut). Not the whole held window: a session whose summaries are behind is held from
 * its start, 75,000 messages for every step.
 */
const userMessagesAfter = (window: HeldWindow, cut: number): ReadonlyArray<number> => {
  const users: Array<number> = []
  for (let i = Math.max(0, cut + 1 - window.base); i < window.isUser.length; i++) {
    if (window.isUser[i] === true) users.push(window.base + i)
  }
  return users
}

/**
 * Plans the context: the budget, the cut (kept while the raw window fits, else moved to an L0 segment end within the
 * summarized prefix and back to a user message; with summaries off, to any user message), and the summaries for
 * what is before the cut.
 *
 * The hard limit holds whatever the summaries do: when that plan exceeds maxContextTokens (the summaries lag or
 * fail) and `fallback` is on, the cut goes to a user message past the summarized prefix, the raw messages getting
 * what the summaries there are leave of the conversation's budget.
 */
export const planContext = (input: PlanInput): ContextPlan => {
  const { config, count, state, window } = input
  const systemTokens = count(input.system)
  const budget = contextBudget(config, systemTokens, input.toolsTokens, input.ratio)
  const end = window.base + window.tokens.length
  // A stored cut past the session's end means the file was rewritten behind kern: the window starts over.
  const current = state.cut > end ? window.base : Math.max(state.cut, window.base)
  const made = (cut: number, composition: Composition | undefined): ContextPlan => {
    const rawTokens = sumFrom(window.tokens, cut - window.base)
    const summaryTokens = composition?.tokens ?? 0
    return {
      budget,
      cut,
      chosen: composition?.chosen ?? [],
      uncovered: composition?.uncovered ?? [],
      block: composition?.block ?? "",
      systemTokens,
      summaryTokens,
      rawTokens,
      estimate: systemTokens + input.toolsTokens + summaryTokens + rawTokens,
      composition,
      fallback: config.summaryBudget > 0 && cut > state.coveredEnd
    }
  }
  if (config.summaryBudget <= 0) {
    // Without summaries the window is cut at any user message: the session file and recall keep the rest.
    return made(chooseCut({ ...window, cut: current, rawBudget: budget.raw, segmentEnds: userMessagesAfter(window, current), coveredEnd: end }), undefined)
  }
  const cut = chooseCut({ ...window, cut: current, rawBudget: budget.raw, segmentEnds: state.l0Ends, coveredEnd: state.coveredEnd })
  const planned = made(cut, cut > 0 ? compose(state, cut, budget.summary, count) : undefined)
  if (!input.fallback || planned.estimate * input.ratio <= config.maxContextTokens) return planned
  // What the summaries there are cost, whatever the cut (by composeHistory's measure, never under their count): the
  // raw window gets the rest of the conversation's budget.
  const summaries = composeHistory(state.segments, end, budget.summary).tokens
  const fallbackCut = chooseCut({
    ...window,
    cut: current,
    rawBudget: budget.conversation - summaries,
    segmentEnds: userMessagesAfter(window, current),
    coveredEnd: end
  })
  return made(fallbackCut, fallbackCut > 0 ? compose(state, fallbackCut, summaries, count) : undefined)
}

/**
 * Where a session is held from: the cut, or, when the fallback cut is past the summarized messages, the user message
 * at or before their end (the summaries still need what follows; a turn is not parted from its start).
 */
export const holdFrom = (window: HeldWindow, cut: number, coveredEnd: number): number => {
  if (cut <= coveredEnd) return cut
  for (let i = coveredEnd; i > window.base; i--) if (window.isUser[i - window.base] === true) return i
  return window.base
}
