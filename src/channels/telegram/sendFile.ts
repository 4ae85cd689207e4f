import { Effect } from "effect"
import type { OutgoingFile } from "../../tools/Channels.js"
import type { BotApi } from "./api.js"
import { retryWrite, sendMarkdown } from "./deliver.js"

/** The raster images Telegram shows as a photo; anything else (an SVG, a GIF, a PDF) goes as a document. */
const photoTypes: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/webp"])
/** sendPhoto takes photos up to 10 MB; a larger image goes as a document. */
const photoLimit = 10 * 1024 * 1024
/** A caption holds 1024 characters; a longer text goes first as a message of its own. */
const captionLimit = 1024

/** Sends a file to a chat: sendPhoto for a raster image, sendDocument for the rest, with `caption` when it fits. */
export const sendFile = (api: BotApi, chatId: string, file: OutgoingFile, caption = "") =>
  Effect.gen(function*() {
    const fits = caption.length <= captionLimit
    if (!fits) yield* sendMarkdown(api, chatId, caption)
    const method = photoTypes.has(file.mediaType) && file.bytes.length <= photoLimit ? "sendPhoto" : "sendDocument"
    yield* retryWrite(api.sendFile(chatId, method, { ...file, caption: fits ? caption : undefined }))
  }).pipe(Effect.withSpan("kern.telegram.sendFile"))
