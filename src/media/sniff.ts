import { fileTypeFromBuffer } from "file-type"
import type { AttachmentKind } from "../session/messages.js"

/** What a file is, judged from its bytes: a sender's name or declared type is never trusted. */
export interface Sniffed {
  readonly mediaType: string
  readonly kind: AttachmentKind
}

/** The image formats every provider that sees takes (OpenAI, Anthropic, Gemini through Chat Completions). */
const imageTypes: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"])

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** Text when the bytes are valid UTF-8 with no NUL: an SVG, a CSV, a script are text to kern, never rendered. */
const isText = (bytes: Uint8Array): boolean => {
  if (bytes.includes(0)) return false
  try {
    utf8.decode(bytes)
    return true
  } catch {
    return false
  }
}

/** The media type and kind of `bytes`, from their magic numbers; text when they are UTF-8; else an opaque file. */
export const sniff = async (bytes: Uint8Array): Promise<Sniffed> => {
  const found = await fileTypeFromBuffer(bytes)
  if (found !== undefined) {
    const mediaType = found.mime
    if (imageTypes.has(mediaType)) return { mediaType, kind: "image" }
    if (mediaType === "application/pdf") return { mediaType, kind: "pdf" }
    if (mediaType.startsWith("audio/")) return { mediaType, kind: "audio" }
    return { mediaType, kind: "file" }
  }
  return isText(bytes) ? { mediaType: "text/plain", kind: "text" } : { mediaType: "application/octet-stream", kind: "file" }
}
