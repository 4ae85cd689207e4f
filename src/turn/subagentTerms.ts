import { Option } from "effect"
import type { TurnBudget } from "../config/schema.js"
import type { RunOrigin } from "../kernel/ApprovalGate.js"
import { type Audience, subagentInterface } from "../kernel/Audience.js"
import type { BudgetLimitsInput } from "../kernel/RunBudget.js"
import type { Delegation } from "../kernel/RunContext.js"
import type { RunToolScope } from "../kernel/toolScope.js"
import { conversationOfChat } from "../session/conversationIds.js"
import type { SubAgent } from "../tools/subagents/SubAgentStore.js"
import type { QueuedMessage } from "./MessageQueue.js"

/** What a sub-agent's turn runs under, in place of what its message's interface and user would give it. */
export interface SubagentTerms {
  readonly toolScope: RunToolScope | undefined
  readonly audience: Audience | undefined
  /** Whom an approval is asked of: the person of the parent turn. */
  readonly origin: RunOrigin
  readonly budget: Partial<BudgetLimitsInput>
  readonly delegation: Delegation
}

const nothing = { maxToolCalls: 0, maxPromptTokens: 0, maxCostUsdCents: 0 }

/**
 * The terms of a sub-agent's turn (a message of the `subagent` interface, its channel the sub-agent's id), from its
 * row: its parent turn's scope, audience and approver, the tools it was given and what is left of its budget. A
 * message that names no running sub-agent (cancelled, ended, unknown, or kern.db unreadable) gets nothing: no tools,
 * a spent budget, so its turn ends before the model is asked.
 */
export const subagentTerms = (
  message: Pick<QueuedMessage, "interface" | "channel" | "userId">,
  found: Option.Option<SubAgent>,
  defaults: TurnBudget
): SubagentTerms => {
  if (Option.isNone(found) || found.value.state !== "running") {
    return {
      toolScope: "none",
      audience: {
        conversationId: conversationOfChat(subagentInterface, message.channel),
        interface: message.interface,
        channel: message.channel,
        userId: message.userId,
        memory: "shared"
      },
      origin: { interface: message.interface, channel: message.channel, userId: message.userId },
      budget: { maxLatencyMs: defaults.maxLatencyMs, ...nothing },
      delegation: { id: Option.match(found, { onNone: () => -1, onSome: (row) => row.id }), depth: Number.MAX_SAFE_INTEGER, tools: new Set() }
    }
  }
  const row = found.value
  return {
    toolScope: row.toolScope ?? undefined,
    audience: row.audience ?? undefined,
    origin: row.approver,
    budget: {
      maxToolCalls: Math.max(0, row.budget.maxToolCalls - row.used.toolCalls),
      maxPromptTokens: Math.max(0, row.budget.maxPromptTokens - row.used.promptTokens),
      maxCostUsdCents: Math.max(0, row.budget.maxCostUsdCents - row.used.costUsdCents),
      maxLatencyMs: row.budget.maxLatencyMs
    },
    delegation: { id: row.id, depth: row.depth, tools: new Set(row.tools) }
  }
}
