import { Effect, Schema } from "effect"
import { ContextStats, estimateTokens } from "./ContextStats.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { ToolSession } from "./ToolSession.js"
import { counted } from "../config/counted.js"

export const ContextBudgetStatsArgs = Schema.Struct({})
export type ContextBudgetStatsArgs = typeof ContextBudgetStatsArgs.Type

export const contextBudgetStatsTool: ToolMetadata = {
  toolId: "context_budget_stats",
  name: "ContextBudgetStats",
  description: "Report the size of the active context (tokens the model got at this turn's last step) and how much " +
    "output compaction and duplicate-output replacement have saved in this session.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  timeoutMs: 5_000,
  scope: "read"
}

export interface ContextBudgetStatsOutput {
  readonly activeContextTokens: number
  readonly compactions: number
  readonly savedByCompactionBytes: number
  readonly savedByCompactionTokens: number
  readonly duplicates: number
  readonly savedByDuplicatesBytes: number
  readonly savedByDuplicatesTokens: number
  readonly text: string
}

export const contextBudgetStats = Effect.fn("kern.tools.context_budget_stats")(function*(_: ContextBudgetStatsArgs) {
  const stats = yield* ContextStats
  const { sessionId } = yield* ToolSession
  const c = yield* stats.get(sessionId)
  const out = {
    activeContextTokens: c.activeContextTokens,
    compactions: c.compactions,
    savedByCompactionBytes: c.savedByCompactionBytes,
    savedByCompactionTokens: estimateTokens(c.savedByCompactionBytes),
    duplicates: c.duplicates,
    savedByDuplicatesBytes: c.savedByDuplicatesBytes,
    savedByDuplicatesTokens: estimateTokens(c.savedByDuplicatesBytes)
  }
  const text = [
    `active context: ${out.activeContextTokens} tokens`,
    `compaction: ${counted(out.compactions, "output")}, saved ${out.savedByCompactionBytes} bytes (~${out.savedByCompactionTokens} tokens)`,
    `duplicate replacement: ${counted(out.duplicates, "output")}, saved ${out.savedByDuplicatesBytes} bytes (~${out.savedByDuplicatesTokens} tokens)`
  ].join("\n")
  return { ...out, text } satisfies ContextBudgetStatsOutput
})
