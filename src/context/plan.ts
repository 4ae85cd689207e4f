import type { HeldWindow } from "../agent/SessionHistory.js"
import type { KernConfig } from "../config/schema.js"
import type { TokenCounter } from "../model/tokenizer.js"
import { type ContextBudget, contextBudget } from "./budget.js"
import { composeHistory, renderConversationSummary } from "./composeHistory.js"
import type { Segment } from "./Segment.js"
import { chooseCut } from "./trim.js"

/** What the context knows of a session between turns: its segment tree and where its raw window starts. */
export interface SessionState {
  readonly segments: ReadonlyArray<Segment>
  readonly cut: number
}

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
}

const sumFrom = (values: ReadonlyArray<number>, from: number): number => {
  let total = 0
  for (let i = Math.max(0, from); i < values.length; i++) total += values[i]!
  return total
}

/** The end of the contiguous summarized L0 prefix: the cut never passes it, so nothing falls out of both layers. */
export const coveredEnd = (segments: ReadonlyArray<Segment>): number => {
  const l0 = segments.filter((segment) => segment.level === 0).sort((a, b) => a.start - b.start)
  let end = 0
  for (const segment of l0) {
    if (segment.start !== end || segment.summary === null) break
    end = segment.end
  }
  return end
}

/**
 * Plans the context: the budget, the cut (kept while the raw window fits, else moved to an L0 segment end within the
 * summarized prefix and back to a user message; with summaries off, to any user message), and the summaries for
 * what is before the cut.
 */
export const planContext = (input: PlanInput): ContextPlan => {
  const { config, count, state, window } = input
  const systemTokens = count(input.system)
  const budget = contextBudget(config, systemTokens, input.toolsTokens, input.ratio)
  const end = window.base + window.tokens.length
  const current = Math.max(state.cut, window.base)
  const summariesOn = config.summaryBudget > 0
  let cut: number
  if (summariesOn) {
    const segmentEnds = state.segments.filter((s) => s.level === 0).map((s) => s.end).sort((a, b) => a - b)
    cut = chooseCut({ ...window, cut: current, rawBudget: budget.raw, segmentEnds, coveredEnd: coveredEnd(state.segments) })
  } else {
    // Without summaries the window is cut at any user message: the session file and recall keep the rest.
    const users: Array<number> = []
    window.isUser.forEach((isUser, i) => {
      if (isUser) users.push(window.base + i)
    })
    cut = chooseCut({ ...window, cut: current, rawBudget: budget.raw, segmentEnds: users, coveredEnd: end })
  }
  const composed = cut > 0 && summariesOn ? composeHistory(state.segments, cut, budget.summary) : undefined
  const chosen = composed?.chosen ?? []
  const block = chosen.length === 0 ? "" : renderConversationSummary(chosen)
  const summaryTokens = block === "" ? 0 : count(block)
  const rawTokens = sumFrom(window.tokens, cut - window.base)
  return {
    budget,
    cut,
    chosen,
    uncovered: composed?.uncovered ?? [],
    block,
    systemTokens,
    summaryTokens,
    rawTokens,
    estimate: systemTokens + input.toolsTokens + summaryTokens + rawTokens
  }
}
