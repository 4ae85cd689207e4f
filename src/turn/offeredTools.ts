import { Effect } from "effect"
import type { KernConfig } from "../config/schema.js"
import type { WebSearchConfig } from "../config/webSearch.js"
import type { PromptSkill } from "../context/systemPrompt.js"
import { toolDefinitionsTokens } from "../context/toolTokens.js"
import { toAiTool } from "../kernel/aiTools.js"
import { mainConversation, operatorUserId } from "../kernel/Audience.js"
import { isMcpToolId } from "../kernel/mcpToolId.js"
import type { ToolSpec } from "../kernel/contracts.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import { type PolicyDecision, ToolPolicy } from "../kernel/ToolPolicy.js"
import { allowsTool, type RunToolScope } from "../kernel/toolScope.js"
import { toolSearchId } from "../mcp/toolSearch.js"
import type { TokenCounter } from "../model/tokenizer.js"
import { promptSkillsOf, type SkillCatalog } from "../skills/catalog.js"
import { readSkillToolId } from "../skills/readSkill.js"
import { webSearchTool } from "../tools/webSearch/webSearch.js"
import { askUserQuestionToolId } from "../tools/askUserQuestion.js"
import { spawnToolId } from "../tools/subagents/spawn.js"
import type { Delegation } from "../kernel/RunContext.js"
import type { QueuedMessage } from "./MessageQueue.js"

/** What decides which registered tools one turn offers the model. */
export interface OfferTerms {
  /** The turn's message: its interface and channel decide what its surface can show. */
  readonly message: QueuedMessage
  /** The paired user's scope, or undefined for the operator. */
  readonly toolScope: RunToolScope | undefined
  /** How many valid skills the agent has now (src/skills): none, no read_skill. */
  readonly skills: number
  /** The config's `webSearch`: without a provider, web_search could only fail. */
  readonly webSearch: WebSearchConfig | undefined
  /** The interfaces whose turns a running surface shows questions to (Questions.surfaces). */
  readonly questionSurfaces: ReadonlySet<string>
  /**
   * The kernel policy's verdict on a tool whatever its arguments (ToolPolicy.evaluate for the turn's agent and safety
   * mode): the same rules the executor applies to a call, so what the model is offered is what may run.
   */
  readonly verdict: (spec: ToolSpec) => PolicyDecision
  /** A sub-agent's turn: the tools it was given (the executor refuses any other) and its depth. */
  readonly delegation: Delegation | undefined
  /** The config's `subagents.maxDepth`: a turn that deep is not offered spawn. */
  readonly maxDepth: number
}

/** The config keys the offer reads. */
export type OfferConfig = Pick<KernConfig, "mcpToolBudget" | "maxContextTokens" | "webSearch" | "name" | "safetyMode" | "subagents">

/** What one turn offers: every tool it lists, and whether its MCP tools go by name only until tool_search loads them. */
export interface TurnOffer {
  readonly listed: ReadonlyArray<RegisteredTool>
  /** The MCP tools' definitions would take more than `mcpToolBudget` of the context. */
  readonly lazyMcp: boolean
}

/** A paired user is offered only what their scope allows. */
const inUserScope = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  terms.toolScope === undefined || allowsTool(terms.toolScope, tool.spec)

/** read_skill only while there is a skill to read; the system prompt's `<skills>` section follows it (skillsOffered). */
const skillsExist = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  tool.spec.toolId !== readSkillToolId || terms.skills > 0

/** web_search only when a search provider is configured (it answers "no search provider configured" otherwise). */
const searchConfigured = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  tool.spec.toolId !== webSearchTool.toolId || terms.webSearch !== undefined

/** tool_search is offered only while MCP tools are offered by name alone: it is what loads them. */
const toolSearchWhenLazy = (lazyMcp: boolean, tool: RegisteredTool): boolean => tool.spec.toolId !== toolSearchId || lazyMcp

/**
 * ask_user_question only where the turn's surface can show a question and send the answer back (seed 004): the
 * terminal, the web UI, Telegram, Slack and `kern chat` on a terminal register themselves while they run; the
 * heartbeat, `kern chat -m` without a terminal and HTTP API clients of other interfaces do not.
 */
const canAskTheUser = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  tool.spec.toolId !== askUserQuestionToolId || terms.questionSurfaces.has(terms.message.interface)

/** A sub-agent is offered only the tools its parent turn gave it. */
const withinDelegation = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  terms.delegation === undefined || terms.delegation.tools.has(tool.spec.toolId)

/** spawn only below `subagents.maxDepth`: a sub-agent that deep cannot start another (spawn refuses it too). */
const spawnBelowDepth = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  tool.spec.toolId !== spawnToolId || (terms.delegation?.depth ?? 0) < terms.maxDepth

/**
 * The policy (safetyMode SAFE or STRICT, the config's `tools` allow and block lists, agent allowlists) does not deny
 * the tool. A tool that needs approval is offered: the approval is asked when it is called.
 */
const allowedByPolicy = (terms: OfferTerms, tool: RegisteredTool): boolean => terms.verdict(tool.spec)._tag !== "Deny"

/**
 * Whether a turn offers `tool` to the model. Every rule about what the model is offered lives here, one predicate per
 * rule; the executor still refuses what a turn may not run, whatever the model asks.
 */
const offers = (terms: OfferTerms, lazyMcp: boolean, tool: RegisteredTool): boolean =>
  inUserScope(terms, tool) && allowedByPolicy(terms, tool) && withinDelegation(terms, tool) && spawnBelowDepth(terms, tool) &&
  skillsExist(terms, tool) && searchConfigured(terms, tool) && canAskTheUser(terms, tool) && toolSearchWhenLazy(lazyMcp, tool)

/** Whether the offered tools include read_skill: then, and only then, the system prompt lists the skills. */
export const skillsOffered = (tools: ReadonlyArray<RegisteredTool>): boolean =>
  tools.some((tool) => tool.spec.toolId === readSkillToolId)

/** The skills a turn's system prompt lists: the catalog's, when the turn offers read_skill; else none. */
export const promptSkills = (tools: ReadonlyArray<RegisteredTool>, catalog: SkillCatalog): ReadonlyArray<PromptSkill> =>
  skillsOffered(tools) ? promptSkillsOf(catalog) : []

/**
 * Whether a step's request carries the tool's definition: every offered tool's, but a lazy turn's MCP tools only once
 * loaded (by tool_search, or by a call of the tool itself). Builtin tools are never lazy.
 */
const definitionSent = (offer: TurnOffer, loaded: ReadonlySet<string>, tool: RegisteredTool): boolean =>
  !offer.lazyMcp || !isMcpToolId(tool.spec.toolId) || loaded.has(tool.spec.toolId)

/** MCP tools go by name when their definitions would take more than `mcpToolBudget` of `maxContextTokens`. */
export const overMcpBudget = (mcpTokens: number, config: Pick<KernConfig, "mcpToolBudget" | "maxContextTokens">): boolean =>
  mcpTokens > config.mcpToolBudget * config.maxContextTokens

/**
 * The tools one turn offers the model, in the registry's order, and whether its MCP tools go by name only:
 * `definitionsTokens` is what a set of tools' definitions cost (the toolkit's count).
 */
export const offeredTools = <E, R>(
  registered: ReadonlyArray<RegisteredTool>,
  terms: OfferTerms,
  config: Pick<KernConfig, "mcpToolBudget" | "maxContextTokens">,
  definitionsTokens: (tools: ReadonlyArray<RegisteredTool>) => Effect.Effect<number, E, R>
): Effect.Effect<TurnOffer, E, R> =>
  Effect.gen(function*() {
    const eager = registered.filter((tool) => offers(terms, false, tool))
    const mcp = eager.filter((tool) => isMcpToolId(tool.spec.toolId))
    const lazyMcp = mcp.length > 0 && overMcpBudget(yield* definitionsTokens(mcp), config)
    return { listed: lazyMcp ? registered.filter((tool) => offers(terms, true, tool)) : eager, lazyMcp }
  })

/** The offered tools whose definitions a step's request carries, given the MCP tools loaded so far in the turn. */
export const definedTools = (offer: TurnOffer, loaded: ReadonlySet<string>): ReadonlyArray<RegisteredTool> =>
  offer.lazyMcp ? offer.listed.filter((tool) => definitionSent(offer, loaded, tool)) : offer.listed

/** The operator's next message, as `kern context show` and GET /context/* picture it: from the terminal. */
const operatorNext: QueuedMessage = {
  id: 0,
  interface: "cli",
  channel: "terminal",
  userId: operatorUserId,
  text: "",
  receivedAtMs: 0,
  turnId: "next",
  conversation: mainConversation
}

/**
 * What the operator's next turn would offer, as its first step sends it (nothing loaded yet): its tools and the skills
 * its system prompt lists, which the context's figures count (context/nextRequest.ts). `questionSurfaces`: the
 * surfaces that show questions in the process asking (the running agent's; none for a command of its own).
 */
export const nextTurnTools = (
  registered: ReadonlyArray<RegisteredTool>,
  catalog: SkillCatalog,
  config: OfferConfig,
  count: TokenCounter,
  questionSurfaces: ReadonlySet<string>
) =>
  Effect.flatMap(ToolPolicy, (policy) =>
    Effect.map(
      offeredTools(
        registered,
        {
          message: operatorNext,
          toolScope: undefined,
          skills: catalog.skills.length,
          webSearch: config.webSearch,
          questionSurfaces,
          verdict: (spec) => policy.evaluate(spec, config.name, config.safetyMode),
          delegation: undefined,
          maxDepth: config.subagents.maxDepth
        },
        config,
        (mcp) => Effect.succeed(toolDefinitionsTokens(mcp.map(toAiTool), count))
      ),
      (offer) => ({ ...offer, defined: definedTools(offer, new Set()), skills: promptSkills(offer.listed, catalog) })
    ))
