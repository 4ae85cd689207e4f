import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import { allowsTool, type RunToolScope } from "../kernel/toolScope.js"
import { askUserQuestionToolId } from "../tools/askUserQuestion.js"
import type { QueuedMessage } from "./MessageQueue.js"

/** What decides which registered tools one turn offers the model. */
export interface OfferTerms {
  /** The turn's message: its interface and channel decide what its surface can show. */
  readonly message: QueuedMessage
  /** The paired user's scope, or undefined for the operator. */
  readonly toolScope: RunToolScope | undefined
  /** The interfaces whose turns a running surface shows questions to (Questions.surfaces). */
  readonly questionSurfaces: ReadonlySet<string>
}

/**
 * ask_user_question only where the turn's surface can show a question and send the answer back (seed 004): the
 * terminal, the web UI, Telegram, Slack and `kern chat` on a terminal register themselves while they run; the
 * heartbeat, `kern chat -m` without a terminal and HTTP API clients of other interfaces do not.
 */
const canAskTheUser = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  tool.spec.toolId !== askUserQuestionToolId || terms.questionSurfaces.has(terms.message.interface)

/**
 * Whether a turn offers `tool` to the model. Every rule about what the model is offered lives here, one predicate per
 * rule; the executor still refuses what a turn may not run, whatever the model asks.
 */
const offers = (terms: OfferTerms, tool: RegisteredTool): boolean =>
  // A paired user is offered only what their scope allows.
  (terms.toolScope === undefined || allowsTool(terms.toolScope, tool.spec)) &&
  canAskTheUser(terms, tool)

/** The tools one turn offers the model, in the registry's order. */
export const offeredTools = (registered: ReadonlyArray<RegisteredTool>, terms: OfferTerms): ReadonlyArray<RegisteredTool> =>
  registered.filter((tool) => offers(terms, tool))
