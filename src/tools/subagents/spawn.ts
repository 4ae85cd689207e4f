import { Effect, Layer, Schema } from "effect"
import { modelToolName } from "../../kernel/aiTools.js"
import { subagentInterface } from "../../kernel/Audience.js"
import { RunContext } from "../../kernel/RunContext.js"
import { toolFailure } from "../../kernel/ToolFailure.js"
import { ToolRegistry } from "../../kernel/ToolRegistry.js"
import { scopeTag } from "../../kernel/toolScope.js"
import { conversationOfChat } from "../../session/conversationIds.js"
import { SubAgents } from "./SubAgents.js"
import type { SubAgent } from "./SubAgentStore.js"

/** The tool's id (and the name the model calls it by). */
export const spawnToolId = "spawn"

const Count = Schema.Int.pipe(Schema.nonNegative())

export const SpawnArgs = Schema.Struct({
  task: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20_000)).annotations({
    description: "what the sub-agent is to do, said in full: it sees the agent's memory files, not this conversation"
  })),
  tools: Schema.optional(Schema.Array(Schema.String).annotations({
    description: "the tools it may use, by name (default: the tools you have); never more than you have"
  })),
  budget: Schema.optional(Schema.Struct({
    maxToolCalls: Schema.optional(Count),
    maxPromptTokens: Schema.optional(Count),
    maxCostUsdCents: Schema.optional(Schema.Number.pipe(Schema.nonNegative()))
  }).annotations({ description: "what of your turn's budget it gets (default: half of what is left of each)" })),
  action: Schema.optional(Schema.Literal("list", "status", "cancel").annotations({
    description: "instead of starting one: list sub-agents, a sub-agent's status, or cancel one (with id)"
  })),
  id: Schema.optional(Schema.Int.pipe(Schema.positive()).annotations({ description: "the sub-agent, for status and cancel" }))
})
export type SpawnArgs = typeof SpawnArgs.Type

const description = "Start a sub-agent: another turn of you, in a conversation of its own, that works on one task with " +
  "the tools you have (or fewer) and part of your budget, while you go on. Its final answer comes back to this " +
  "conversation as a new message \"[sub-agent N finished: …]\". { task, tools?, budget? } starts one; { action: " +
  "\"status\", id }, { action: \"cancel\", id } and { action: \"list\" } follow them."

/** A sub-agent as the model and `kern` read it. */
export const subAgentView = (row: SubAgent) => ({
  id: row.id,
  state: row.state,
  task: row.task,
  conversation: conversationOfChat(subagentInterface, String(row.id)),
  depth: row.depth,
  tools: row.tools.map(modelToolName),
  budget: { maxToolCalls: row.budget.maxToolCalls, maxPromptTokens: row.budget.maxPromptTokens, maxCostUsdCents: row.budget.maxCostUsdCents },
  used: row.used,
  ...(row.outcome === null ? {} : { outcome: row.outcome })
})

const needsId = (action: string) => toolFailure("VALIDATION_ERROR", `spawn { action: "${action}" } needs id, the sub-agent's number`)

/** spawn({ task, tools?, budget? }) or spawn({ action, id? }). */
export const spawn = (subagents: SubAgents["Type"]) =>
  Effect.fn("kern.tools.spawn")(function*(args: SpawnArgs) {
    const ctx = yield* RunContext
    switch (args.action) {
      case "list":
        return { subagents: (yield* subagents.list(ctx)).map(subAgentView) }
      case "status":
        if (args.id === undefined) return yield* needsId("status")
        return subAgentView(yield* subagents.status(ctx, args.id))
      case "cancel":
        if (args.id === undefined) return yield* needsId("cancel")
        return subAgentView(yield* subagents.cancel(ctx, args.id))
      case undefined: {
        if (args.task === undefined || args.task.trim() === "") {
          return yield* toolFailure("VALIDATION_ERROR", "spawn needs task (what the sub-agent is to do), or an action")
        }
        const started = yield* subagents.spawn(ctx, { task: args.task, tools: args.tools, budget: args.budget })
        return {
          ...subAgentView(started),
          note: `sub-agent ${started.id} is working; its answer comes back here as a new message when it finishes`
        }
      }
    }
  })

/** Registers spawn: the running agent's (it needs SubAgents); turns below `subagents.maxDepth` are offered it. */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const registry = yield* ToolRegistry
  const subagents = yield* SubAgents
  yield* registry.register({
    toolId: spawnToolId,
    name: "Spawn",
    description,
    safetyClass: "LOCAL_WRITE",
    idempotent: false,
    timeoutMs: 30_000,
    sideEffectLevel: "local_write",
    riskTags: [scopeTag("read")]
  }, { parameters: SpawnArgs, handler: spawn(subagents) })
}))
