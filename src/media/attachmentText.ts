import type { Attachment } from "../session/messages.js"

// What the model reads of a file that came with a message, in words: the label before an image or PDF part, the
// note that stands in for one it is not sent, and the text of what is sent as text (a PDF's, a transcript, a text
// file's). One place, so the note a model gets, the text the context counts and the preview agree.

/** A size as people read it: `512 bytes`, `340 KB`, `1.2 MB`. */
export const shownSize = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
    ? `${Math.round(bytes / 1024)} KB`
    : `${(bytes / 1024 / 1024).toFixed(1)} MB`

const kindWord = (attachment: Attachment): string =>
  attachment.kind === "text" || attachment.kind === "file" ? "file" : attachment.kind

/** What is known of a file beside its name and size: an image's pixels, a PDF's pages, a file's type. */
const details = (attachment: Attachment): ReadonlyArray<string> => {
  switch (attachment.kind) {
    case "image":
      return attachment.width !== undefined && attachment.height !== undefined ? [`${attachment.width}×${attachment.height}`] : []
    case "pdf":
      return attachment.pages !== undefined ? [attachment.pages === 1 ? "1 page" : `${attachment.pages} pages`] : []
    case "audio":
      return []
    default:
      return [attachment.mediaType]
  }
}

/** `[image: receipt.jpg, 1.2 MB, 1600×1200, <more>]`, the attachment's note last: a note is always shown. */
const bracket = (attachment: Attachment, more: ReadonlyArray<string>): string => {
  const parts = [`${kindWord(attachment)}: ${attachment.name}`, shownSize(attachment.bytes), ...details(attachment), ...more]
  const note = attachment.note === undefined ? "" : `; note: ${attachment.note}`
  return `[${parts.join(", ")}${note}]`
}

/** An image the `read` tool read, as its label or note says it: `[image: photos/cat.png, 200 KB, 1024×768, …]`. */
export const readImageLine = (
  image: { readonly name: string; readonly bytes: number; readonly width?: number | undefined; readonly height?: number | undefined },
  more: ReadonlyArray<string>
): string => {
  const size = image.width !== undefined && image.height !== undefined ? [`${image.width}×${image.height}`] : []
  return `[image: ${image.name}, ${[shownSize(image.bytes), ...size, ...more].join(", ")}]`
}

/** The line before an image or PDF sent as a part. */
export const partLabel = (attachment: Attachment): string => bracket(attachment, [])

/** Why an image (or a PDF's pages) is not sent as a part. */
export type NotShown =
  | { readonly reason: "cannot-see" }
  | { readonly reason: "older"; readonly kept: number }
  | { readonly reason: "unreadable"; readonly detail: string }

export const notShownText = (why: NotShown): string => {
  switch (why.reason) {
    case "cannot-see":
      return "not shown: this model does not take images"
    case "older":
      return `not shown: an earlier image (only the last ${why.kept} images of the conversation are sent)`
    case "unreadable":
      return `not shown: ${why.detail}`
  }
}

/** An image not sent: `[image: receipt.jpg, 1.2 MB, not shown: this model does not take images]`. */
export const imageNote = (attachment: Attachment, why: NotShown): string => bracket(attachment, [notShownText(why)])

/**
 * A file sent as text: a PDF's extracted text, a voice note's transcript, a text file's content, each under its
 * label; a file with none (or of another kind) is named with its type and size.
 */
export const attachmentAsText = (attachment: Attachment): string => {
  const text = attachment.text ?? ""
  switch (attachment.kind) {
    case "pdf":
      return text === "" ? bracket(attachment, ["no text could be read from it"]) : `${bracket(attachment, ["its text follows"])}\n${text}`
    case "audio":
      return text === "" ? bracket(attachment, ["no transcript"]) : `${bracket(attachment, ["transcript follows"])}\n${text}`
    case "text":
      return text === "" ? bracket(attachment, []) : `${bracket(attachment, ["its content follows"])}\n${text}`
    case "image":
      return bracket(attachment, [])
    case "file":
      return bracket(attachment, [])
  }
}

/**
 * The text form of a message's files, one per file, as the context holds them before a turn decides what its
 * model is sent (src/media/promptMedia.ts): what tokens are counted from (with an image's price, imageTokens.ts).
 */
export const attachmentsText = (attachments: ReadonlyArray<Attachment>): ReadonlyArray<string> =>
  attachments.map(attachmentAsText)
