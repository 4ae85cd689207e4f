import { Context, Effect, Layer } from "effect"
import type { CarveRequest } from "../../kernel/RunBudget.js"
import type { RunContextData } from "../../kernel/RunContext.js"
import { type ToolFailure, toolFailure } from "../../kernel/ToolFailure.js"
import type { SubAgent } from "./SubAgentStore.js"

/** What spawn asks for: the task, the tools (ids or the names the model calls them by) and the budget to give. */
export interface SpawnRequest {
  readonly task: string
  readonly tools?: ReadonlyArray<string> | undefined
  readonly budget?: CarveRequest | undefined
}

export interface SubAgentsService {
  /** Starts a sub-agent of the run `ctx`: its own conversation, its parent turn's terms, a budget carved from the run's. */
  readonly spawn: (ctx: RunContextData, request: SpawnRequest) => Effect.Effect<SubAgent, ToolFailure>
  /** One sub-agent the run may see (its own conversation's, or any for the operator's). */
  readonly status: (ctx: RunContextData, id: number) => Effect.Effect<SubAgent, ToolFailure>
  /** The latest sub-agents the run may see, newest first. */
  readonly list: (ctx: RunContextData) => Effect.Effect<ReadonlyArray<SubAgent>, ToolFailure>
  /** Ends a running sub-agent: its turn is stopped, and it reports nothing. */
  readonly cancel: (ctx: RunContextData, id: number) => Effect.Effect<SubAgent, ToolFailure>
}

/**
 * Sub-agents: work a turn hands to another turn of the agent, in a conversation of its own, whose answer comes back
 * as a new turn of the parent's conversation. Only the running agent can run them (src/runtime/subagentsLive.ts).
 */
export class SubAgents extends Context.Tag("kern/tools/SubAgents")<SubAgents, SubAgentsService>() {}

const refused = () => Effect.fail(toolFailure("PERMISSION_DENIED", "only a running agent (kern run, kern start) can run sub-agents"))

/** For a process that runs no agent: every call refused with the reason. */
export const unavailable: Layer.Layer<SubAgents> = Layer.succeed(SubAgents, {
  spawn: refused,
  status: refused,
  list: refused,
  cancel: refused
})
