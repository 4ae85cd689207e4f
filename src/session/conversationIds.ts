import { mainConversation } from "../kernel/Audience.js"

/**
 * A conversation's sessions are named for it: the operator's (`main`) keep the plain `YYYYMMDD-HHMMSS-mmm-xxxx`, any
 * other's carry `_<conversation>` after it, so a session's conversation is known from its file name alone (listing,
 * recall's filter, an agent folder whose kern.db was lost).
 */
const separator = "_"

/**
 * The conversation of a chat that is not the operator's: `<interface>-<chat>` (a Telegram chat id, a Slack channel
 * and thread), every character outside `A-Za-z0-9-` made `-`, so it fits a file name and never holds the separator.
 */
export const conversationOfChat = (iface: string, channel: string): string =>
  `${iface}-${channel}`.replace(/[^A-Za-z0-9-]/g, "-")

/** The session id `stamp` (a new session's time and suffix) takes in `conversation`. */
export const sessionIdIn = (stamp: string, conversation: string): string =>
  conversation === mainConversation ? stamp : `${stamp}${separator}${conversation}`

/** The conversation a session belongs to, from its id. */
export const conversationOfSession = (sessionId: string): string => {
  const at = sessionId.indexOf(separator)
  return at < 0 ? mainConversation : sessionId.slice(at + 1)
}

/** Where a conversation id comes from, read back: the interface and chat it names (none for `main`). */
export const chatOfConversation = (conversation: string): { readonly interface: string; readonly chat: string } | undefined => {
  if (conversation === mainConversation) return undefined
  const at = conversation.indexOf("-")
  return at < 0 ? undefined : { interface: conversation.slice(0, at), chat: conversation.slice(at + 1) }
}
