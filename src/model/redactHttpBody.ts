import { HttpBody } from "@effect/platform"
import { Stream } from "effect"
import type { KnownSecret } from "../config/KnownSecrets.js"
import { jsonForm, redactSecretsInJson, redactSecretsInText } from "../kernel/secretGuard.js"

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
 * Whether any secret, as itself or as it is escaped inside JSON, occurs in the bytes: a search of the bytes, so a body
 * that holds none (a model request of a long history, every step) is neither decoded nor copied.
 */
const holdsSecret = (bytes: Uint8Array, secrets: ReadonlyArray<KnownSecret>): boolean => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return secrets.some((secret) => {
    const escaped = jsonForm(secret.value)
    // Most keys read the same escaped: the body is searched once for them.
    return buffer.includes(secret.value) || (escaped !== secret.value && buffer.includes(escaped))
  })
}

/** Bytes of `contentType` with every known secret replaced; the same array when they held none. */
const redactBytes = (bytes: Uint8Array, contentType: string, secrets: ReadonlyArray<KnownSecret>): Uint8Array => {
  if (!isText(contentType) || !holdsSecret(bytes, secrets)) return bytes
  const text = new TextDecoder().decode(bytes)
  const redacted = redactTextOf(text, contentType, secrets)
  return redacted === text ? bytes : encoder.encode(redacted)
}

/**
 * An HTTP body (a request kern sends, a response it serves) with every known secret replaced by `[redacted:NAME]`:
 * JSON and text whole (as bytes, or as a raw string or bytes), an event stream frame by frame, a form's text fields.
 * Files and other binary bodies pass, and so does a raw body that is neither text nor bytes (a Node stream: kern sends
 * none). The same body when it held none.
 */
export const redactHttpBody = (body: HttpBody.HttpBody, secrets: ReadonlyArray<KnownSecret>): HttpBody.HttpBody => {
  if (secrets.length === 0) return body
  switch (body._tag) {
    case "Uint8Array": {
      const redacted = redactBytes(body.body, body.contentType, secrets)
      return redacted === body.body ? body : HttpBody.uint8Array(redacted, body.contentType)
    }
    case "Raw": {
      // A raw body's length, if it was given, is the old one's: the redacted body goes without it.
      const contentType = body.contentType ?? "text/plain"
      if (typeof body.body === "string") {
        const redacted = isText(contentType) ? redactTextOf(body.body, contentType, secrets) : body.body
        return redacted === body.body ? body : HttpBody.raw(redacted, { contentType })
      }
      if (body.body instanceof Uint8Array) {
        const redacted = redactBytes(body.body, contentType, secrets)
        return redacted === body.body ? body : HttpBody.uint8Array(redacted, contentType)
      }
      return body
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
