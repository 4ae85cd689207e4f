import type { ToolSpec } from "../kernel/contracts.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import type { PolicyDecision } from "../kernel/ToolPolicy.js"
import { allowsTool, type RunToolScope } from "../kernel/toolScope.js"
import type { QueuedMessage } from "./MessageQueue.js"

/** What decides which registered tools one turn offers the model. */
export interface OfferTerms {
  /** The turn's message: its interface and channel decide what its surface can show. */
  readonly message: QueuedMessage
  /** The paired user's scope, or undefined for the operator. */
  readonly toolScope: RunToolScope | undefined
  /**
   * The kernel policy's verdict on a tool whatever its arguments (ToolPolicy.evaluate for the turn's agent and safety
   * mode): the same rules the executor applies to a call, so what the model is offered is what may run.
   */
  readonly verdict: (spec: ToolSpec) => PolicyDecision
}

/** A paired user is offered only what their scope allows. */
const inUserScope = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  terms.toolScope === undefined || allowsTool(terms.toolScope, tool.spec)

/**
 * The policy (safetyMode SAFE or STRICT, the config's `tools` allow and block lists, agent allowlists) does not deny
 * the tool. A tool that needs approval is offered: the approval is asked when it is called.
 */
const allowedByPolicy = (terms: OfferTerms, tool: RegisteredTool): boolean => terms.verdict(tool.spec)._tag !== "Deny"

/**
 * Whether a turn offers `tool` to the model. Every rule about what the model is offered lives here, one predicate per
 * rule; the executor still refuses what a turn may not run, whatever the model asks.
 */
const offers = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  inUserScope(terms, tool) && allowedByPolicy(terms, tool)

/** The tools one turn offers the model, in the registry's order. */
export const offeredTools = (registered: ReadonlyArray<RegisteredTool>, terms: OfferTerms): ReadonlyArray<RegisteredTool> =>
  registered.filter((tool) => offers(terms, tool))
