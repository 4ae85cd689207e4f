import type { ContextBudget } from "./budget.js"
import type { ContextPlan } from "./plan.js"
import type { Segment } from "./Segment.js"

/** The context of one model call, in tokens as kern counts them (`calibration` is the model's count over ours). */
export interface ContextBreakdown {
  readonly sessionId: string
  /** Messages in the session. */
  readonly messages: number
  /** The first message sent raw; the ones before it are summarized (and in the session file and recall). */
  readonly cut: number
  readonly budget: ContextBudget
  readonly tokens: {
    readonly system: number
    readonly tools: number
    readonly summary: number
    readonly raw: number
    readonly total: number
  }
  /** The segments whose summaries are in `<conversation_summary>`, in message order. */
  readonly injected: ReadonlyArray<Segment>
  /** Message ranges before the cut no summary covers (only when even the top-level summaries overflow the budget). */
  readonly uncovered: ReadonlyArray<{ readonly start: number; readonly end: number }>
  /** The per-model correction applied to our counts. */
  readonly calibration: number
  /**
   * The raw window starts past the summarized messages (the summaries lag or fail and the request would not fit
   * otherwise): messages between the summaries and the cut are only in the session file and recall.
   */
  readonly fallback: boolean
}

/** The breakdown a plan makes. */
export const breakdownOf = (
  sessionId: string,
  messages: number,
  planned: ContextPlan,
  toolsTokens: number,
  calibration: number
): ContextBreakdown => ({
  sessionId,
  messages,
  cut: planned.cut,
  budget: planned.budget,
  tokens: {
    system: planned.systemTokens,
    tools: toolsTokens,
    summary: planned.summaryTokens,
    raw: planned.rawTokens,
    total: planned.estimate
  },
  injected: planned.chosen,
  uncovered: planned.uncovered,
  calibration,
  fallback: planned.fallback
})
