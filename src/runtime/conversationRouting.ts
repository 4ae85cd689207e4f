import { Effect, Option } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { mainConversation, peerAgentInterface, subagentInterface } from "../kernel/Audience.js"
import { conversationOfChat } from "../session/conversationIds.js"
import { pairedInterfaces } from "../tools/Channels.js"
import { operatorUserId } from "../turn/MessageQueue.js"
import { isDirectChat } from "../users/directChat.js"
import { PairingStore } from "../users/PairingStore.js"

/** What routing looks at in a message: where it came from and who sent it. */
export interface Addressed {
  readonly interface: string
  readonly channel: string
  readonly userId: string
}

/**
 * Which conversation a message belongs to. With `conversations: "shared"` every message is the operator's
 * conversation's (`main`), as before conversations per person. Otherwise the operator's own interfaces (terminal,
 * web, CLI, HTTP API, the heartbeat) and the operator's paired chat accounts in a direct chat are `main`; every other
 * direct chat, group chat, Slack thread and peer agent (`kern mcp serve`) is a conversation of its own
 * (`conversationOfChat`), whoever writes in it:
 * a group's turns see only the group even when the operator speaks there. A sub-agent's messages go to its own
 * conversation (`subagent-<id>`) in either mode: its work is apart from its parent's. When the user's role cannot be read
 * (kern.db busy) the message goes to its chat's conversation: the narrower view.
 */
export const makeConversationOf = Effect.gen(function*() {
  const { config } = yield* AgentConfig
  const pairings = yield* PairingStore
  const isOperator = (message: Addressed) =>
    pairings.approvedUser(message.interface, message.userId).pipe(
      Effect.map(Option.exists((pairing) => pairing.role === "operator")),
      Effect.catchAll(() => Effect.succeed(false))
    )
  return (message: Addressed): Effect.Effect<string> =>
    Effect.gen(function*() {
      if (message.interface === subagentInterface) return conversationOfChat(message.interface, message.channel)
      if (config.conversations === "shared") return mainConversation
      // Another agent (kern mcp serve): its own conversation, though the operator's token carried it in.
      if (message.interface === peerAgentInterface) return conversationOfChat(message.interface, message.channel)
      if (message.userId === operatorUserId || !pairedInterfaces.has(message.interface)) return mainConversation
      if (isDirectChat(message) && (yield* isOperator(message))) return mainConversation
      return conversationOfChat(message.interface, message.channel)
    })
})
