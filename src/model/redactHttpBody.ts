import { HttpBody } from "@effect/platform"
import { Stream } from "effect"
import type { KnownSecret } from "../config/KnownSecrets.js"
import { redactSecretsInJson, redactSecretsInText } from "../kernel/secretGuard.js"

const encoder = new TextEncoder()

const isJson = (contentType: string) => /^application\/([\w.+-]*\+)?json/i.test(contentType)
const isText = (contentType: string) => isJson(contentType) || /^(text\/|application\/x-www-form-urlencoded)/i.test(contentType)

/** Text of `contentType` with every known secret replaced: JSON through its strings, SSE frame by frame. */
const redactTextOf = (text: string, contentType: string, secrets: ReadonlyArray<KnownSecret>): string => {
  if (isJson(contentType)) return redactSecretsInJson(text, secrets)
  if (/^text\/event-stream/i.test(contentType)) {
    return text.split("\n").map((line) =>
      line.startsWith("data: ") ? `data: ${redactSecretsInJson(line.slice(6), secrets)}` : redactSecretsInText(line, secrets)
    ).join("\n")
  }
  return redactSecretsInText(text, secrets)
}

/**
 * An HTTP body (a request kern sends, a response it serves) with every known secret replaced by `[redacted:NAME]`:
 * JSON and text whole, an event stream frame by frame, a form's text fields. Files and other binary bodies pass.
 * The same body when it held none.
 */
export const redactHttpBody = (body: HttpBody.HttpBody, secrets: ReadonlyArray<KnownSecret>): HttpBody.HttpBody => {
  if (secrets.length === 0) return body
  switch (body._tag) {
    case "Uint8Array": {
      if (!isText(body.contentType)) return body
      const text = new TextDecoder().decode(body.body)
      const redacted = redactTextOf(text, body.contentType, secrets)
      return redacted === text ? body : HttpBody.uint8Array(encoder.encode(redacted), body.contentType)
    }
    case "Stream": {
      if (!isText(body.contentType)) return body
      const contentType = body.contentType
      // One decoder for the stream: a character split across two chunks is decoded whole.
      const decoder = new TextDecoder()
      return HttpBody.stream(
        Stream.map(body.stream, (chunk) => encoder.encode(redactTextOf(decoder.decode(chunk, { stream: true }), contentType, secrets))),
        contentType
      )
    }
    case "FormData": {
      let changed = false
      const form = new FormData()
      for (const [name, value] of body.formData.entries()) {
        const redacted = typeof value === "string" ? redactSecretsInText(value, secrets) : value
        if (redacted !== value) changed = true
        form.append(name, redacted)
      }
      return changed ? HttpBody.formData(form) : body
    }
    default:
      return body
  }
}
