import { Effect } from "effect"
import type { AttachmentKind } from "../session/messages.js"
import { imageSize, maxImagePixels } from "./imageSize.js"
import { pdfText } from "./pdfText.js"
import { Transcriber } from "./Transcriber.js"
import type { Sniffed } from "./sniff.js"

/** What kern reads out of a file for the model and recall, beside its bytes (the optional fields of Attachment). */
export interface Described {
  /** Set when reading showed the sniffed kind to be wrong: an image sharp cannot read is a plain file. */
  readonly kind?: AttachmentKind
  readonly width?: number
  readonly height?: number
  readonly pages?: number
  readonly text?: string
  readonly note?: string
}

/** The characters of a text file kept as the attachment's text; the rest stays in the media store. */
export const textFileChars = 100_000
/** The characters of a PDF's text kept as the attachment's text (page-numbered); the rest stays in the PDF. */
export const pdfTextChars = 100_000

const utf8 = new TextDecoder("utf-8")

const describeText = (bytes: Uint8Array): Described => {
  const text = utf8.decode(bytes)
  return text.length <= textFileChars
    ? { text }
    : { text: text.slice(0, textFileChars), note: `text cut at ${textFileChars} of ${text.length} characters` }
}

const describeImage = (bytes: Uint8Array) =>
  Effect.map(imageSize(bytes), (size): Described =>
    size._tag === "Read"
      ? { width: size.width, height: size.height }
      : {
        kind: "file",
        note: /pixel limit/i.test(size.detail)
          ? `could not be read as an image: it is over ${maxImagePixels} pixels`
          : `could not be read as an image (${size.detail})`
      })

const describePdf = (bytes: Uint8Array) =>
  pdfText(bytes, { maxChars: pdfTextChars }).pipe(
    Effect.map((read): Described => {
      if (read.text.trim().length === 0) {
        return { pages: read.pages, note: "this PDF has no text layer (a scan or images only): its text could not be read" }
      }
      const lastPage = /--- page (\d+) ---[^]*$/.exec(read.text)?.[1]
      return read.truncated
        ? {
          pages: read.pages,
          text: read.text,
          note: `text cut after page ${lastPage ?? "1"} of ${read.pages} (at most ${pdfTextChars} characters are kept)`
        }
        : { pages: read.pages, text: read.text }
    }),
    Effect.catchTag("PdfUnreadable", (unreadable) =>
      Effect.succeed<Described>({ note: `its text could not be read: ${unreadable.message}` }))
  )

const describeAudio = (name: string, bytes: Uint8Array, mediaType: string) =>
  Effect.flatMap(Transcriber, (transcriber) =>
    transcriber.transcribe({ name, bytes, mediaType }).pipe(
      Effect.map((text): Described => text.length === 0 ? { note: "transcribed, but no speech was heard" } : { text }),
      Effect.catchTag("TranscriptionFailed", (failed) => Effect.succeed<Described>({ note: failed.message }))
    ))

/**
 * Reads what the model and recall get of a stored file: an image's size (or that it is not a readable image), a
 * PDF's page-numbered text (or why not), a voice note's transcript (or why not), a text file's content (capped).
 * Never fails: what cannot be read becomes the attachment's `note`, and the message goes through with its file.
 */
export const describe = (file: { readonly name: string; readonly bytes: Uint8Array }, sniffed: Sniffed): Effect.Effect<Described, never, Transcriber> => {
  switch (sniffed.kind) {
    case "text":
      return Effect.sync(() => describeText(file.bytes))
    case "image":
      return describeImage(file.bytes)
    case "pdf":
      return describePdf(file.bytes)
    case "audio":
      return describeAudio(file.name, file.bytes, sniffed.mediaType)
    case "file":
      return Effect.succeed({})
  }
}
