// The images and files a model request carries, read from each API's real shape, and the checks its provider
// makes before it takes the request (a wrong shape is refused with a 400, as the real endpoint refuses it):
// - Chat Completions: `image_url` parts with a data URL (or http(s)), `file` parts with `file_data` (OpenAI, OpenRouter).
// - Responses: `input_image` with `image_url`, `input_file` with `filename` and `file_data`, in a message's content.
// - Anthropic Messages: `image` and `document` blocks with a base64 `source`; a user message's `tool_result` blocks
//   come before anything else in it.

export interface RecordedMedia {
  /** Index of the message (`messages`, or the Responses `input` item) that carries the part. */
  readonly message: number
  /** Index of the part in that message's content. */
  readonly part: number
  readonly type: "image" | "file"
  readonly mediaType: string
  readonly data: Uint8Array
  readonly fileName?: string
}

export class MediaRefused extends Error {}

const imageTypes = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"])

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const base64 = (text: unknown, where: string): Uint8Array => {
  if (typeof text !== "string" || text === "" || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
    throw new MediaRefused(`${where}: invalid base64 data`)
  }
  return new Uint8Array(Buffer.from(text, "base64"))
}

const dataUrl = (url: unknown, where: string): { readonly mediaType: string; readonly data: Uint8Array } => {
  const match = typeof url === "string" ? /^data:([a-z]+\/[a-z0-9.+-]+);base64,(.*)$/s.exec(url) : null
  if (match === null) throw new MediaRefused(`${where}: expected a base64 data URL`)
  return { mediaType: match[1]!, data: base64(match[2], where) }
}

const contentOf = (message: unknown): ReadonlyArray<unknown> =>
  isRecord(message) && Array.isArray(message["content"]) ? message["content"] : []

const chatMedia = (body: Record<string, unknown>): Array<RecordedMedia> => {
  const out: Array<RecordedMedia> = []
  const messages = Array.isArray(body["messages"]) ? body["messages"] : []
  messages.forEach((message, m) => {
    contentOf(message).forEach((part, p) => {
      if (!isRecord(part)) throw new MediaRefused(`messages[${m}].content[${p}] is not an object`)
      const where = `messages[${m}].content[${p}]`
      if (part["type"] === "image_url") {
        if (!isRecord(message) || message["role"] !== "user") throw new MediaRefused(`${where}: image_url is only valid in a user message`)
        const url = isRecord(part["image_url"]) ? part["image_url"]["url"] : undefined
        const { mediaType, data } = dataUrl(url, where)
        if (!imageTypes.has(mediaType)) throw new MediaRefused(`${where}: unsupported image type ${mediaType}`)
        out.push({ message: m, part: p, type: "image", mediaType, data })
      } else if (part["type"] === "file") {
        const file = isRecord(part["file"]) ? part["file"] : {}
        const { mediaType, data } = dataUrl(file["file_data"], where)
        out.push({ message: m, part: p, type: "file", mediaType, data, fileName: String(file["filename"]) })
      } else if (part["type"] !== "text") {
        throw new MediaRefused(`${where}: unknown content part type ${String(part["type"])}`)
      }
    })
    // Each call of an assistant message is answered by tool messages right after it, before a user message.
    if (isRecord(message) && Array.isArray(message["tool_calls"])) {
      const ids = new Set(message["tool_calls"].map((call) => (isRecord(call) ? call["id"] : undefined)))
      for (let next = m + 1; next < messages.length && ids.size > 0; next++) {
        const answer = messages[next]
        if (isRecord(answer) && answer["role"] === "tool") ids.delete(answer["tool_call_id"])
        else if (isRecord(answer) && answer["role"] === "user") {
          throw new MediaRefused(`messages[${m}]: tool_calls must be followed by tool messages answering each`)
        } else break
      }
    }
  })
  return out
}

const responsesMedia = (body: Record<string, unknown>): Array<RecordedMedia> => {
  const out: Array<RecordedMedia> = []
  const input = Array.isArray(body["input"]) ? body["input"] : []
  input.forEach((item, m) => {
    contentOf(item).forEach((part, p) => {
      const where = `input[${m}].content[${p}]`
      if (!isRecord(part)) throw new MediaRefused(`${where} is not an object`)
      if (part["type"] === "input_image") {
        const { mediaType, data } = dataUrl(part["image_url"], where)
        if (!imageTypes.has(mediaType)) throw new MediaRefused(`${where}: unsupported image type ${mediaType}`)
        out.push({ message: m, part: p, type: "image", mediaType, data })
      } else if (part["type"] === "input_file") {
        if (typeof part["filename"] !== "string") throw new MediaRefused(`${where}: input_file needs a filename with file_data`)
        const { mediaType, data } = dataUrl(part["file_data"], where)
        out.push({ message: m, part: p, type: "file", mediaType, data, fileName: part["filename"] })
      }
    })
  })
  return out
}

const messagesMedia = (body: Record<string, unknown>): Array<RecordedMedia> => {
  const out: Array<RecordedMedia> = []
  const messages = Array.isArray(body["messages"]) ? body["messages"] : []
  messages.forEach((message, m) => {
    let othersSeen = false
    contentOf(message).forEach((part, p) => {
      const where = `messages.${m}.content.${p}`
      if (!isRecord(part)) throw new MediaRefused(`${where} is not an object`)
      if (part["type"] === "tool_result") {
        if (othersSeen) throw new MediaRefused(`${where}: tool_result blocks must come first in a user message`)
        return
      }
      othersSeen = true
      if (part["type"] !== "image" && part["type"] !== "document") return
      const source = isRecord(part["source"]) ? part["source"] : {}
      if (source["type"] !== "base64") throw new MediaRefused(`${where}.source: expected type base64`)
      const mediaType = String(source["media_type"])
      if (part["type"] === "image" && !imageTypes.has(mediaType)) throw new MediaRefused(`${where}.source.media_type: ${mediaType}`)
      if (part["type"] === "document" && mediaType !== "application/pdf") throw new MediaRefused(`${where}.source.media_type: ${mediaType}`)
      const data = base64(source["data"], `${where}.source.data`)
      out.push({
        message: m,
        part: p,
        type: part["type"] === "image" ? "image" : "file",
        mediaType,
        data,
        ...(typeof part["title"] === "string" ? { fileName: part["title"] } : {})
      })
    })
  })
  return out
}

/** The media parts of a model request at `path`, in its API's shape; MediaRefused when its provider would refuse it. */
export const mediaPartsOf = (path: string, body: Record<string, unknown>): ReadonlyArray<RecordedMedia> =>
  path === "/chat/completions"
    ? chatMedia(body)
    : path === "/responses"
    ? responsesMedia(body)
    : path === "/messages"
    ? messagesMedia(body)
    : []
