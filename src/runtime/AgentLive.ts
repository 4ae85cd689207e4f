import { Layer } from "effect"
import * as SessionIndex from "../session/SessionIndex.js"
import { SessionStore } from "../session/SessionStore.js"
import { MessageQueue } from "../turn/MessageQueue.js"
import { TurnRunner } from "../turn/TurnRunner.js"
import { TurnStops } from "../turn/TurnStops.js"
import { SubAgentStore } from "../tools/subagents/SubAgentStore.js"

/** The agent's loop services over a kernel, tools and a model: queue, sessions, the turn runner and its stops, and
 * the sub-agents' terms (their turns run under them). */
export const layer = TurnRunner.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(MessageQueue.Default, TurnStops.Default, SubAgentStore.Default, SessionStore.Default.pipe(Layer.provide(SessionIndex.layer))))
)
