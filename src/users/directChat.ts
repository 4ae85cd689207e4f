/**
 * Whether a chat message came from a direct chat with its sender rather than a group or thread other people read: a
 * Telegram private chat (its chat id is the user's id), a Slack DM (a `D…` conversation, no thread). Anything else,
 * an interface this does not know included, counts as not direct.
 */
export const isDirectChat = (message: { readonly interface: string; readonly channel: string; readonly userId: string }): boolean => {
  if (message.interface === "telegram") return message.channel === message.userId
  if (message.interface === "slack") return /^D[A-Z0-9]+$/.test(message.channel)
  return false
}
