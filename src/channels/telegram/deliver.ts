import { Duration, Effect, Schedule } from "effect"
import { type BotApi, isNotModified, isParseError, type SendOptions, type TelegramError } from "./api.js"
import { renderMarkdown } from "./markdown.js"
import { splitHtml, visibleText } from "./split.js"

/**
 * A write that Telegram answered with 429, 5xx or nothing at all is tried again (after `retry_after` for a 429);
 * a refusal (400, 403) is final.
 */
export const transient = (error: TelegramError): boolean =>
  error.reason === "rate_limited" || error.reason === "server" || error.reason === "network"

/** Up to three more tries, each after Telegram's `retry_after` or a second. */
const writeRetries = Schedule.identity<TelegramError>().pipe(
  Schedule.addDelay((error) => Duration.seconds(error.retryAfterSeconds ?? 1)),
  Schedule.intersect(Schedule.recurs(3))
)

export const retryWrite = <A>(write: Effect.Effect<A, TelegramError>): Effect.Effect<A, TelegramError> =>
  Effect.retry(write, { schedule: writeRetries, while: transient })

const html: SendOptions = { parseMode: "HTML" }

/** Sends one chunk as HTML; if Telegram cannot parse it, the same text goes as plain text: never lost to formatting. */
export const sendChunk = (api: BotApi, chatId: string, chunk: string, options: SendOptions = {}) =>
  retryWrite(api.sendMessage(chatId, chunk, { ...html, ...options })).pipe(
    Effect.catchIf(isParseError, () => retryWrite(api.sendMessage(chatId, visibleText(chunk), { keyboard: options.keyboard }))),
    Effect.map((message) => message.message_id)
  )

/** Edits a message to a chunk, with the same plain-text fallback; an edit to what it already says is done. */
export const editChunk = (api: BotApi, chatId: string, messageId: number, chunk: string, options: SendOptions = {}) =>
  retryWrite(api.editMessageText(chatId, messageId, chunk, { ...html, ...options })).pipe(
    Effect.catchIf(isParseError, () => retryWrite(api.editMessageText(chatId, messageId, visibleText(chunk), { keyboard: options.keyboard }))),
    Effect.catchIf(isNotModified, () => Effect.void),
    Effect.asVoid
  )

/** A reply's Markdown as Telegram messages: rendered to HTML, split at 4096, sent in order. */
export const sendMarkdown = (api: BotApi, chatId: string, markdown: string) =>
  Effect.forEach(splitHtml(renderMarkdown(markdown)), (chunk) => sendChunk(api, chatId, chunk))
