import type { WebSearchConfig } from "../config/webSearch.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import { allowsTool, type RunToolScope } from "../kernel/toolScope.js"
import { webSearchTool } from "../tools/webSearch/webSearch.js"
import type { QueuedMessage } from "./MessageQueue.js"

/** What decides which registered tools one turn offers the model. */
export interface OfferTerms {
  /** The turn's message: its interface and channel decide what its surface can show. */
  readonly message: QueuedMessage
  /** The paired user's scope, or undefined for the operator. */
  readonly toolScope: RunToolScope | undefined
  /** The config's `webSearch`: without a provider, web_search could only fail. */
  readonly webSearch: WebSearchConfig | undefined
}

/** web_search only when a search provider is configured (it answers "no search provider configured" otherwise). */
const searchConfigured = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  tool.spec.toolId !== webSearchTool.toolId || terms.webSearch !== undefined

/**
 * Whether a turn offers `tool` to the model. Every rule about what the model is offered lives here, one predicate per
 * rule; the executor still refuses what a turn may not run, whatever the model asks.
 */
const offers = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  // A paired user is offered only what their scope allows.
  (terms.toolScope === undefined || allowsTool(terms.toolScope, tool.spec)) &&
  searchConfigured(terms, tool)

/** The tools one turn offers the model, in the registry's order. */
export const offeredTools = (registered: ReadonlyArray<RegisteredTool>, terms: OfferTerms): ReadonlyArray<RegisteredTool> =>
  registered.filter((tool) => offers(terms, tool))
