// Channel users by name (GET /users): who wrote a message of another channel, or where a reply went, as a person
// reads it. Pure, so the rule is unit-tested under Node. A name is the user's own words: only ever rendered as text.
import { arr, isObject, type Json, str } from "./wire.js"

/** Display names by user (`<interface>:user:<id>`) and by the chat they paired from (`<interface>:chat:<id>`). */
export type UserNames = ReadonlyMap<string, string>

export const noNames: UserNames = new Map()

export const userKeyOf = (iface: string, userId: string) => `${iface}:user:${userId}`
const chatKeyOf = (iface: string, chatId: string) => `${iface}:chat:${chatId}`

/** GET /users answers `{ users: [{ interface, userId, chatId, name, role }] }`; a user without a name is left out. */
export const decodeUsers = (u: Json | undefined): UserNames | undefined => {
  if (!isObject(u) || !Array.isArray(u["users"])) return undefined
  const names = new Map<string, string>()
  for (const user of arr(u, "users")) {
    if (!isObject(user)) continue
    const iface = str(user, "interface")
    const userId = str(user, "userId")
    const chatId = str(user, "chatId")
    const name = str(user, "name")?.trim()
    if (iface === undefined || name === undefined || name.length === 0) continue
    if (userId !== undefined) names.set(userKeyOf(iface, userId), name)
    if (chatId !== undefined && chatId.length > 0) names.set(chatKeyOf(iface, chatId), name)
  }
  return names
}

/**
 * A message of another channel as `<name> · <interface>` when its user (or, for a reply the agent sent, its chat) is
 * known by name; else the channel and the chat, as the message says them (`telegram · 12345`).
 */
export const senderLabel = (
  names: UserNames,
  message: { readonly interface: string; readonly channel?: string | undefined; readonly userId?: string | undefined }
): string => {
  const name = (message.userId === undefined ? undefined : names.get(userKeyOf(message.interface, message.userId))) ??
    (message.channel === undefined ? undefined : names.get(chatKeyOf(message.interface, message.channel)))
  if (name !== undefined) return `${name} · ${message.interface}`
  return message.channel === undefined || message.channel === message.interface ? message.interface : `${message.interface} · ${message.channel}`
}

/** Whether a message's sender is a channel user the names do not know yet (they paired since the names loaded). */
export const unknownSender = (
  names: UserNames,
  message: { readonly interface: string; readonly userId?: string | undefined }
): message is { readonly interface: string; readonly userId: string } =>
  message.interface !== "web" && message.userId !== undefined && !names.has(userKeyOf(message.interface, message.userId))
