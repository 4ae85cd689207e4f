import type { RecallHit } from "../recall/schema.js"
import type { Usage } from "../session/messages.js"
import type { QueuedMessage } from "./MessageQueue.js"
import type { TurnFailure } from "./TurnFailure.js"

/** What a turn reports as it goes: streamed to the terminal, `--json` lines, and later the web UI. */
export type TurnEvent =
  /** A model step begins (the first one right after the message is recorded). */
  | { readonly type: "step"; readonly step: number }
  | { readonly type: "text"; readonly delta: string }
  | { readonly type: "tool-call"; readonly id: string; readonly name: string; readonly params: unknown }
  | {
    readonly type: "tool-result"
    readonly id: string
    readonly name: string
    readonly isError: boolean
    readonly text: string
    readonly durationMs: number
  }
  /** A message of the turn's channel that arrived during the turn, given to the model at this step. */
  | { readonly type: "injected"; readonly text: string; readonly message: QueuedMessage }
  | ({ readonly type: "usage" } & Usage)
  | {
    readonly type: "error"
    readonly message: string
    /** The failure as data: `_tag` (ProviderFailed, WatchdogFired, BudgetExhausted, StepLimitReached, SessionNotWritten) and its fields. */
    readonly failure: typeof TurnFailure.Encoded
  }
  | { readonly type: "done"; readonly reply: string; readonly delivered: boolean; readonly steps: number }
  /** The context's own work the turn waits for (summarizing an overflow), as a progress line. */
  | { readonly type: "context"; readonly text: string }
  /** Auto-recall added these hits (in `tokens` tokens) before the user's message; shown, never persisted. */
  | { readonly type: "recall"; readonly query: string; readonly hits: ReadonlyArray<RecallHit>; readonly tokens: number }

/** A turn's (or a step's) token counts and cost: the shape sessions store with each answer. */
export type TurnUsage = Usage

export const noUsage: TurnUsage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0 }

export const addUsage = (a: TurnUsage, b: TurnUsage): TurnUsage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
  cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  costUsdCents: a.costUsdCents + b.costUsdCents
})
