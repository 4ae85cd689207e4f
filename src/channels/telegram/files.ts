import { Effect, Either } from "effect"
import type { MediaStoreShape } from "../../media/MediaStore.js"
import type { Attachment } from "../../session/messages.js"
import { botDownloadLimit, type BotApi, TelegramError } from "./api.js"
import type { FileRef } from "./inbound.js"
import { sizeText } from "../../media/sizeText.js"

/** The files of a message could not all be taken: `text` is said to the sender, and the update is past. */
export interface FilesRefused {
  readonly _tag: "FilesRefused"
  readonly text: string
}


const refusal = (text: string): FilesRefused => ({ _tag: "FilesRefused", text })

const overTelegram = (name: string, size: number | undefined) =>
  `${name}${size === undefined ? "" : ` is ${sizeText(size)}:`} Telegram lets bots download files up to ${sizeText(botDownloadLimit)}; ` +
  "send it in a smaller form or as a link"

/** What Telegram and kern say about sizes before anything is downloaded. */
const checkAnnounced = (media: MediaStoreShape, files: ReadonlyArray<FileRef>): FilesRefused | undefined => {
  for (const file of files) {
    if (file.size === undefined) continue
    if (file.size > media.limits.maxFileBytes) {
      return {
        _tag: "FilesRefused",
        text: `${file.name} is ${sizeText(file.size)}; files over ${sizeText(media.limits.maxFileBytes)} are not taken (config media.maxFileBytes)`
      }
    }
    if (file.size > botDownloadLimit) return refusal(overTelegram(file.name, file.size))
  }
  return undefined
}

/** One file: getFile, then its bytes (capped), then the media store. A transient failure fails; a final one is refused. */
const fetchOne = (api: BotApi, media: MediaStoreShape, file: FileRef) =>
  Effect.gen(function*() {
    const cap = Math.min(media.limits.maxFileBytes, botDownloadLimit)
    const found = yield* api.getFile(file.fileId).pipe(Effect.either)
    if (Either.isLeft(found)) {
      const error = found.left
      if (error.reason !== "rejected") return yield* error
      return yield* Effect.fail(
        /file is too big/i.test(error.description)
          ? refusal(overTelegram(file.name, file.size))
          : refusal(`${file.name} could not be fetched from Telegram (${error.description})`)
      )
    }
    const info = found.right
    if (info.file_path === undefined) {
      return yield* Effect.fail(refusal(`${file.name} could not be fetched from Telegram (it gave no download path)`))
    }
    if (info.file_size !== undefined && info.file_size > cap) {
      return yield* Effect.fail(checkAnnounced(media, [{ ...file, size: info.file_size }]) ?? refusal(overTelegram(file.name, info.file_size)))
    }
    const downloaded = yield* api.download(info.file_path, cap).pipe(
      Effect.catchIf((error) => error.reason === "rejected", () =>
        Effect.fail(refusal(`${file.name} is over ${sizeText(cap)}; files that large are not taken (config media.maxFileBytes)`)))
    )
    // What came is not what Telegram announced (an error page, a cut body): tried again, like a network failure.
    const expected = info.file_size ?? file.size
    if (expected !== undefined && downloaded.bytes.length !== expected) {
      return yield* new TelegramError({
        reason: "network",
        method: "download",
        description: "",
        message: `Telegram file download: ${file.name} came as ${downloaded.bytes.length} bytes, not the ${expected} announced`
      })
    }
    return yield* media.ingest({ name: file.name, bytes: downloaded.bytes }).pipe(
      Effect.mapError((rejected) => refusal(rejected.message))
    )
  })

/**
 * Fetches a message's files into the media store. Fails with a TelegramError when trying again may work (network,
 * 5xx, a cut or wrong body): the caller leaves the update where it is; fails with FilesRefused when it cannot (too
 * large for kern or for Telegram, a refused file id, a file kern does not store).
 */
export const fetchFiles = (
  api: BotApi,
  media: MediaStoreShape,
  files: ReadonlyArray<FileRef>
): Effect.Effect<ReadonlyArray<Attachment>, TelegramError | FilesRefused> =>
  Effect.gen(function*() {
    const announced = checkAnnounced(media, files)
    if (announced !== undefined) return yield* Effect.fail(announced)
    const known = files.flatMap((file) => file.size === undefined ? [] : [{ bytes: file.size }])
    yield* media.checkTotal(known).pipe(Effect.mapError((error) => refusal(error.message)))
    const attachments = yield* Effect.forEach(files, (file) => fetchOne(api, media, file))
    yield* media.checkTotal(attachments).pipe(Effect.mapError((error) => refusal(error.message)))
    return attachments
  }).pipe(Effect.withSpan("kern.telegram.files", { attributes: { files: files.length } }))
