import type { MemoryReach } from "../config/schema.js"
import type { RunContextData } from "./RunContext.js"

export type { MemoryReach }

/**
 * The user id of the operator's own messages (terminal, web UI, CLI, HTTP API: whoever holds the folder or its
 * token). Chat channels put their peer's ids (numeric for Telegram, `U…` for Slack) in `userId`, never this.
 */
export const operatorUserId = "operator"

/** The operator's conversation: the agent's main one, wherever the operator speaks. */
export const mainConversation = "main"

/**
 * The interface of messages from another agent through `kern mcp serve --allow-send`: each peer (named by the
 * server's `--peer`) has a conversation of its own (`mcp-<peer>`), apart from the operator's, whoever started the server.
 */
export const peerAgentInterface = "mcp"

/**
 * The interface of a sub-agent's messages (the spawn tool): the channel is the sub-agent's id, and each sub-agent has
 * a conversation of its own (`subagent-<id>`), whoever spawned it; its turns run under the terms stored for it.
 */
export const subagentInterface = "subagent"

/**
 * The folder of the agent folder the operator shares with everyone else on purpose (created by `kern init`, empty):
 * all a non-operator's file tools reach unless their user's memory reach is `all`.
 */
export const sharedDirName = "shared"


/**
 * Whose conversation a run serves, and so what it may see. The operator's conversation (`main`) sees everything; any
 * other (a paired user's direct chat, a group, a Slack thread) sees only itself: its own sessions, the shared prompt
 * files, and the agent folder's `shared/` unless its user's memory reach is `all`.
 */
export interface Audience {
  /** The conversation the run belongs to: `main`, or one of `conversationOfChat`'s ids. */
  readonly conversationId: string
  /** Where the message came from and who sent it (`operator` for the operator's own interfaces). */
  readonly interface: string
  readonly channel: string
  readonly userId: string
  /** The sender's name as paired, when known. */
  readonly name?: string | undefined
  /** How far a non-operator's file tools reach. */
  readonly memory: MemoryReach
}

/**
 * Whether a run sees everything: the operator's conversation, or a run outside any conversation (the library with no
 * audience, `kern kernel exec`, the heartbeat).
 */
export const seesEverything = (ctx: Pick<RunContextData, "audience">): boolean =>
  ctx.audience === undefined || ctx.audience.conversationId === mainConversation

/**
 * The audience of a run that does not see everything (a conversation that is not the operator's), what every guard
 * confines by; undefined for a run that sees everything.
 */
export const confinedAudience = (ctx: Pick<RunContextData, "audience">): Audience | undefined =>
  seesEverything(ctx) ? undefined : ctx.audience
