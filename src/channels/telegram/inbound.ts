import type { CallbackQuery, Message, PhotoSize, Update, User } from "./api.js"

/** A file a message carries, as Telegram announced it: getFile is asked for `fileId`; `size` is known before download. */
export interface FileRef {
  readonly fileId: string
  /** A name to show: the sender's file name, or one made from the kind (`photo_12.jpg`). */
  readonly name: string
  readonly size?: number | undefined
}

/** What an update asks of kern, before anyone checks who sent it. */
export type Inbound =
  /** A text in a private chat, or one addressed to the bot in a group. */
  | {
    readonly _tag: "Text"
    readonly chatId: string
    readonly userId: string
    readonly displayName: string
    /** The text, or a file's caption (empty when a file came without one). */
    readonly text: string
    readonly group: boolean
    /** Photos, documents, voice notes and audio that came with it. */
    readonly files: ReadonlyArray<FileRef>
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

/**
 * The photo size to download: the largest whose size fits `cap` (Telegram lists sizes smallest first); when none is
 * known to fit, the smallest, whose size then says why it is refused.
 */
export const pickPhoto = (sizes: ReadonlyArray<PhotoSize>, cap: number): PhotoSize | undefined => {
  const area = (size: PhotoSize) => size.width * size.height
  const fitting = sizes.filter((size) => size.file_size === undefined || size.file_size <= cap)
  const pool = fitting.length > 0 ? fitting : sizes
  const ordered = [...pool].sort((a, b) => area(a) - area(b))
  return fitting.length > 0 ? ordered.at(-1) : ordered[0]
}

/** The files of a message; photos in the largest size up to `cap` bytes. */
export const filesOf = (message: Message, cap: number): ReadonlyArray<FileRef> => {
  const files: Array<FileRef> = []
  const photo = message.photo === undefined ? undefined : pickPhoto(message.photo, cap)
  if (photo !== undefined) files.push({ fileId: photo.file_id, name: `photo_${message.message_id}.jpg`, size: photo.file_size })
  if (message.document !== undefined) {
    files.push({ fileId: message.document.file_id, name: message.document.file_name ?? `document_${message.message_id}`, size: message.document.file_size })
  }
  if (message.voice !== undefined) {
    files.push({ fileId: message.voice.file_id, name: `voice_${message.message_id}.ogg`, size: message.voice.file_size })
  }
  if (message.audio !== undefined) {
    const audio = message.audio
    files.push({ fileId: audio.file_id, name: audio.file_name ?? audio.title ?? `audio_${message.message_id}`, size: audio.file_size })
  }
  return files
}

/** What an update asks; `fileCap` (config media.maxFileBytes) chooses which size of a photo to take. */
export const classify = (update: Update, bot: User, fileCap: number = Number.POSITIVE_INFINITY): Inbound => {
  if (update.callback_query !== undefined) return { _tag: "Button", query: update.callback_query }
  const message = update.message
  if (message === undefined) return { _tag: "Ignored", why: "not a message" }
  if (message.from === undefined || message.from.is_bot === true) return { _tag: "Ignored", why: "not from a person" }
  const files = filesOf(message, fileCap)
  const said = message.text ?? message.caption ?? ""
  if (said.trim() === "" && files.length === 0) return { _tag: "Ignored", why: "no text" }
  const base = {
    chatId: String(message.chat.id),
    userId: String(message.from.id),
    displayName: displayName(message.from),
    files
  }
  if (message.chat.type === "private") return { _tag: "Text", ...base, text: said, group: false }
  if (message.chat.type !== "group" && message.chat.type !== "supergroup") return { _tag: "Ignored", why: `a ${message.chat.type} chat` }
  if (!addressed({ ...message, text: said }, bot)) return { _tag: "Ignored", why: "group chatter not addressed to the bot" }
  const text = withoutMention(said, bot)
  return text === "" && files.length === 0 ? { _tag: "Ignored", why: "only the bot's name" } : { _tag: "Text", ...base, text, group: true }
}
