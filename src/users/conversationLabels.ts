// Who a conversation is with and where, as the operator reads it in `kern sessions list`, GET /sessions and the web
// UI's Sessions tab: from the conversation id alone (conversationIds.ts) and the paired users' names. Plain functions
// over rows already read, so the quick `kern sessions list` bundle takes no database code for a folder whose sessions
// are all the operator's.
import { mainConversation, operatorUserId, subagentInterface } from "../kernel/Audience.js"
import { chatOfConversation, conversationOfChat } from "../session/conversationIds.js"
import { userKey } from "./userNames.js"

/** The person a conversation is with: the operator, or one paired user (`telegram:555`) and their name if known. */
export interface ConversationPerson {
  /** `operator`, or the user as `kern users` names them: `<interface>:<user id>`. */
  readonly userId: string
  /** The name they paired with; null when kern does not know it (not paired any more, or paired without a name). */
  readonly name: string | null
}

export interface ConversationLabel {
  readonly conversation: string
  /** Null for a group chat or a Slack thread (several people may speak there), or a direct chat of nobody known. */
  readonly person: ConversationPerson | null
  /** Where it takes place: `main`, `telegram DM`, `telegram group -100123`, `slack DM`, `slack thread C0123`. */
  readonly channel: string
}

/** What a conversation label needs of a pairing (PairingStore's rows). */
export interface PairedUser {
  readonly interface: string
  readonly userId: string
  readonly chatId: string
  readonly displayName: string
}

const operator: ConversationPerson = { userId: operatorUserId, name: operatorUserId }

/** Where a conversation's chat is, and whether it is a direct chat with one person. */
const placeOf = (iface: string, chat: string): { readonly channel: string; readonly direct: boolean } => {
  if (iface === "telegram") {
    // Telegram's group and channel chat ids are negative; a private chat's id is its user's.
    return chat.startsWith("-") ? { channel: `telegram group ${chat}`, direct: false } : { channel: "telegram DM", direct: true }
  }
  if (iface === "slack") {
    // A DM's channel is `D…`; a mention is answered in its thread, `<channel>:<thread ts>` (the `:` made `-`).
    const thread = chat.indexOf("-")
    if (thread > 0) return { channel: `slack thread ${chat.slice(0, thread)}`, direct: false }
    return chat.startsWith("D") ? { channel: "slack DM", direct: true } : { channel: `slack ${chat}`, direct: false }
  }
  // A sub-agent's conversation is nobody's chat: the agent's own work (the spawn tool).
  if (iface === subagentInterface) return { channel: `sub-agent ${chat}`, direct: false }
  return { channel: `${iface} ${chat}`, direct: true }
}

/**
 * Who `conversation` is with and where. A direct chat's person is the paired user whose user id or pairing chat
 * names the same conversation (a Telegram DM's chat id is the user's id; a Slack DM is the channel they paired from).
 */
export const labelConversation = (conversation: string, users: ReadonlyArray<PairedUser>): ConversationLabel => {
  if (conversation === mainConversation) return { conversation, person: operator, channel: mainConversation }
  const chat = chatOfConversation(conversation)
  if (chat === undefined) return { conversation, person: null, channel: conversation }
  const place = placeOf(chat.interface, chat.chat)
  if (!place.direct) return { conversation, person: null, channel: place.channel }
  const paired = users.find((user) =>
    user.interface === chat.interface &&
    (conversationOfChat(user.interface, user.userId) === conversation || conversationOfChat(user.interface, user.chatId) === conversation)
  )
  if (paired !== undefined) {
    const name = paired.displayName.trim()
    return { conversation, person: { userId: userKey(paired), name: name === "" ? null : name }, channel: place.channel }
  }
  // A Telegram DM names its user even when they are no longer paired.
  const person = chat.interface === "telegram" ? { userId: userKey({ interface: "telegram", userId: chat.chat }), name: null } : null
  return { conversation, person, channel: place.channel }
}

/** A label's person as one cell of text: `operator`, `Alice (telegram:555)`, `telegram:555`, or `—`. */
export const personText = (person: ConversationPerson | null): string =>
  person === null ? "—" : person.userId === operatorUserId ? operatorUserId : person.name === null ? person.userId : `${person.name} (${person.userId})`
