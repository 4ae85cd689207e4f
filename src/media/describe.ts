import { Effect } from "effect"
import type { Sniffed } from "./sniff.js"

/** What kern reads out of a file for the model and recall, beside its bytes (the optional fields of Attachment). */
export interface Described {
  readonly width?: number
  readonly height?: number
  readonly pages?: number
  readonly text?: string
  readonly note?: string
}

/** The characters of a text file kept as the attachment's text; the rest stays in the media store. */
export const textFileChars = 100_000

const utf8 = new TextDecoder("utf-8")

/**
 * Reads what the model and recall get of a stored file: a text file's content (capped). Kinds with more to read
 * (images' sizes, PDFs' text, voice transcripts) are described by their own modules, called from here.
 */
export const describe = (bytes: Uint8Array, sniffed: Sniffed): Effect.Effect<Described> =>
  Effect.sync((): Described => {
    if (sniffed.kind !== "text") return {}
    const text = utf8.decode(bytes)
    return text.length <= textFileChars
      ? { text }
      : { text: text.slice(0, textFileChars), note: `text cut at ${textFileChars} of ${text.length} characters` }
  })
