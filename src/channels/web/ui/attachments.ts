// Files in the chat: the attachments of a message as the page shows them (GET /history's Attachment, POST /message's
// answer, an outgoing event's file), decoded at the boundary. Pure, so the rules are unit-tested under Node.
import { decodeFile, type FileView, isObject, type Json, num } from "./wire.js"

export { decodeFile, type FileView }

/** The images a browser shows in place (the server serves only these inline). */
const shownInPlace: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"])

export const decodeFiles = (list: ReadonlyArray<Json>): ReadonlyArray<FileView> =>
  list.flatMap((u) => {
    const file = decodeFile(u)
    return file === undefined ? [] : [file]
  })

/** The file's URL, relative to the page (so the UI works under a path prefix too). */
export const mediaUrl = (file: FileView): string => `media/${file.id}`

/** A thumbnail in the transcript: a raster image the server shows in place. */
export const isThumbnail = (file: FileView): boolean => file.kind === "image" && shownInPlace.has(file.mediaType)

export const sizeText = (bytes: number): string =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`

/** The line under a download chip's name: its size, and its pages for a PDF. */
export const fileDetails = (file: FileView): string =>
  [sizeText(file.bytes), ...(file.pages === undefined ? [] : [`${file.pages} ${file.pages === 1 ? "page" : "pages"}`])].join(" · ")

/** The caps `GET /status` says POST /message holds files to (config `media`). */
export interface MediaLimits {
  readonly maxFileBytes: number
  readonly maxTurnBytes: number
}

export const decodeMediaLimits = (status: Json | undefined): MediaLimits | undefined => {
  const media = isObject(status) ? status["media"] : undefined
  if (!isObject(media)) return undefined
  const maxFileBytes = num(media, "maxFileBytes")
  const maxTurnBytes = num(media, "maxTurnBytes")
  return maxFileBytes === undefined || maxTurnBytes === undefined ? undefined : { maxFileBytes, maxTurnBytes }
}

/**
 * Why files picked in the composer cannot go (the server's own words for its caps), or undefined when they can: each
 * file within maxFileBytes, all within maxTurnBytes, none empty.
 */
export const refusal = (files: ReadonlyArray<{ readonly name: string; readonly size: number }>, limits: MediaLimits | undefined): string | undefined => {
  for (const file of files) {
    if (file.size === 0) return `${file.name} is empty`
    if (limits !== undefined && file.size > limits.maxFileBytes) {
      return `${file.name} is ${sizeText(file.size)}; files over ${sizeText(limits.maxFileBytes)} are not taken (config media.maxFileBytes)`
    }
  }
  const total = files.reduce((sum, file) => sum + file.size, 0)
  if (limits !== undefined && total > limits.maxTurnBytes) {
    return `these files are ${sizeText(total)} together; a message may carry ${sizeText(limits.maxTurnBytes)} (config media.maxTurnBytes)`
  }
  return undefined
}
