import type { WebSearchConfig } from "../config/webSearch.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import { allowsTool, type RunToolScope } from "../kernel/toolScope.js"
import type { PromptSkill } from "../context/systemPrompt.js"
import { promptSkillsOf, type SkillCatalog } from "../skills/catalog.js"
import { readSkillToolId } from "../skills/readSkill.js"
import { webSearchTool } from "../tools/webSearch/webSearch.js"
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
}

/** read_skill only while there is a skill to read; the system prompt's `<skills>` section follows it (skillsOffered). */
const skillsExist = (terms: Pick<OfferTerms, "skills">, tool: RegisteredTool): boolean =>
  tool.spec.toolId !== readSkillToolId || terms.skills > 0

/** Whether the offered tools include read_skill: then, and only then, the system prompt lists the skills. */
export const skillsOffered = (tools: ReadonlyArray<RegisteredTool>): boolean =>
  tools.some((tool) => tool.spec.toolId === readSkillToolId)

/** web_search only when a search provider is configured (it answers "no search provider configured" otherwise). */
const searchConfigured = (terms: Pick<OfferTerms, "webSearch">, tool: RegisteredTool): boolean =>
  tool.spec.toolId !== webSearchTool.toolId || terms.webSearch !== undefined

/**
 * Whether a turn offers `tool` to the model. Every rule about what the model is offered lives here, one predicate per
 * rule; the executor still refuses what a turn may not run, whatever the model asks.
 */
const offers = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  // A paired user is offered only what their scope allows.
  (terms.toolScope === undefined || allowsTool(terms.toolScope, tool.spec)) &&
  skillsExist(terms, tool) &&
  searchConfigured(terms, tool)

/** The tools one turn offers the model, in the registry's order. */
export const offeredTools = (registered: ReadonlyArray<RegisteredTool>, terms: OfferTerms): ReadonlyArray<RegisteredTool> =>
  registered.filter((tool) => offers(terms, tool))

/** The skills a turn's system prompt lists: the catalog's, when the turn offers read_skill; else none. */
export const promptSkills = (tools: ReadonlyArray<RegisteredTool>, catalog: SkillCatalog): ReadonlyArray<PromptSkill> =>
  skillsOffered(tools) ? promptSkillsOf(catalog) : []

/**
 * What the operator's next turn would be offered, for inspection (`kern context show`, GET /context/*): its tools and
 * the skills its system prompt lists. There is no message yet, so only the rules that need none apply.
 */
export const inspectedOffer = (
  registered: ReadonlyArray<RegisteredTool>,
  catalog: SkillCatalog,
  webSearch: WebSearchConfig | undefined
) => {
  const terms = { skills: catalog.skills.length, webSearch }
  const tools = registered.filter((tool) => skillsExist(terms, tool) && searchConfigured(terms, tool))
  return { tools, skills: promptSkills(tools, catalog) }
}
