import type { CallbackQuery, Message, Update, User } from "./api.js"

/** What an update asks of kern, before anyone checks who sent it. */
export type Inbound =
  /** A text in a private chat, or one addressed to the bot in a group. */
  | {
    readonly _tag: "Text"
    readonly chatId: string
    readonly userId: string
    readonly displayName: string
    readonly text: string
    readonly group: boolean
  }
  | { readonly _tag: "Button"; readonly query: CallbackQuery }
  /** Group chatter not addressed to the bot, a channel post, a sticker: nothing to do but move past it. */
  | { readonly _tag: "Ignored"; readonly why: string }

const displayName = (user: User): string =>
  user.username !== undefined ? `@${user.username}` : [user.first_name, user.last_name].filter((part) => part !== undefined).join(" ")

/** Whether a group message is for the bot: it names the bot (`@username`) or answers one of its messages. */
const addressed = (message: Message, bot: User): boolean => {
  if (message.reply_to_message?.from?.id === bot.id) return true
  const name = bot.username
  if (name === undefined || message.text === undefined) return false
  // `/stop@kern_bot`: how Telegram writes a command meant for one bot of a group.
  return new RegExp(`(^|[^A-Za-z0-9_])@${name}(?![A-Za-z0-9_])`, "i").test(message.text) ||
    new RegExp(`^/[A-Za-z0-9_]+@${name}(?![A-Za-z0-9_])`, "i").test(message.text.trim())
}

/** The group message without the bot's name, so the model reads what was said to it. */
const withoutMention = (text: string, bot: User): string =>
  bot.username === undefined
    ? text
    : text.replace(new RegExp(`(^|\\s)@${bot.username}(?![A-Za-z0-9_])`, "gi"), "$1").replace(/[ \t]{2,}/g, " ").trim()

export const classify = (update: Update, bot: User): Inbound => {
  if (update.callback_query !== undefined) return { _tag: "Button", query: update.callback_query }
  const message = update.message
  if (message === undefined) return { _tag: "Ignored", why: "not a message" }
  if (message.from === undefined || message.from.is_bot === true) return { _tag: "Ignored", why: "not from a person" }
  if (message.text === undefined || message.text.trim() === "") return { _tag: "Ignored", why: "no text" }
  const base = {
    chatId: String(message.chat.id),
    userId: String(message.from.id),
    displayName: displayName(message.from)
  }
  if (message.chat.type === "private") return { _tag: "Text", ...base, text: message.text, group: false }
  if (message.chat.type !== "group" && message.chat.type !== "supergroup") return { _tag: "Ignored", why: `a ${message.chat.type} chat` }
  if (!addressed(message, bot)) return { _tag: "Ignored", why: "group chatter not addressed to the bot" }
  const text = withoutMention(message.text, bot)
  return text === "" ? { _tag: "Ignored", why: "only the bot's name" } : { _tag: "Text", ...base, text, group: true }
}
