import { LanguageModel, Prompt } from "@effect/ai"
import { HttpBody } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { layerFromConfig } from "../../src/model/Provider.js"
import * as RedactingHttpClient from "../../src/model/RedactingHttpClient.js"
import { redactHttpBody } from "../../src/model/redactHttpBody.js"
import { make as makeFakeServer, FakeReply } from "../support/fakeModelServer.js"
import { loadedConfig } from "./harness.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"

const secret = "sk-live-0123456789abcdef"
/** A secret JSON escapes: its quote and backslash are written differently inside a JSON string. */
const quoted = "pass\"word\\with-escapes"
const { secrets } = KnownSecrets.make([["OPENROUTER_API_KEY", secret], ["DB_PASSWORD", quoted]])
const utf8 = new TextEncoder()

/** The bytes a body puts on the wire (what a server reads), whatever its kind. */
const wireText = (body: HttpBody.HttpBody): Effect.Effect<string> => {
  switch (body._tag) {
    case "Uint8Array":
      return Effect.succeed(new TextDecoder().decode(body.body))
    case "Raw":
      return Effect.succeed(typeof body.body === "string" ? body.body : new TextDecoder().decode(body.body as Uint8Array))
    case "Stream":
      return Stream.runCollect(body.stream).pipe(
        Effect.map((chunks) => new TextDecoder().decode(Buffer.concat(Chunk.toArray(chunks)))),
        Effect.orDie
      )
    case "FormData":
      return Effect.succeed([...body.formData.entries()].map(([name, value]) => `${name}=${String(value)}`).join("&"))
    case "Empty":
      return Effect.succeed("")
  }
}

const json = (value: unknown) => JSON.stringify(value)

// Every kind of body kern's HTTP client can be handed, each carrying a secret: what the door must take out.
const corpus: ReadonlyArray<readonly [string, HttpBody.HttpBody]> = [
  ["raw JSON text (a model request's body as a string)", HttpBody.raw(json({ messages: [{ content: `key ${secret}` }] }), { contentType: "application/json" })],
  ["raw text without a content type", HttpBody.raw(`the key is ${secret}`)],
  ["raw JSON bytes", HttpBody.raw(utf8.encode(json({ text: secret })), { contentType: "application/json" })],
  ["raw text/plain with the escaping secret", HttpBody.raw(`password: ${quoted}`, { contentType: "text/plain" })],
  ["JSON bytes", HttpBody.uint8Array(utf8.encode(json({ messages: [{ role: "user", content: secret }] })), "application/json")],
  ["JSON bytes, the secret escaped in a string", HttpBody.uint8Array(utf8.encode(json({ content: `db ${quoted}` })), "application/json")],
  ["JSON bytes, the secret in a key", HttpBody.uint8Array(utf8.encode(json({ [secret]: 1 })), "application/json; charset=utf-8")],
  ["vendor JSON bytes", HttpBody.uint8Array(utf8.encode(json({ a: [{ b: secret }] })), "application/vnd.api+json")],
  ["text bytes", HttpBody.uint8Array(utf8.encode(`x ${secret} y`), "text/plain")],
  ["form-urlencoded bytes", HttpBody.uint8Array(utf8.encode(`text=${secret}`), "application/x-www-form-urlencoded")],
  [
    "an event stream split inside the secret",
    HttpBody.stream(
      Stream.fromIterable([utf8.encode(`data: ${json({ delta: secret.slice(0, 10) })}\n\n`), utf8.encode(`data: ${json({ delta: secret })}\n\n`)]),
      "text/event-stream"
    )
  ],
  ["a form's text field", HttpBody.formData((() => {
    const form = new FormData()
    form.append("text", `reply ${secret}`)
    return form
  })())]
]

describe("the HTTP door takes every known secret out of every body", () => {
  it.effect("a corpus of body kinds: none keeps a secret, each still reads as its kind", () =>
    Effect.gen(function*() {
      for (const [name, body] of corpus) {
        const sent = yield* wireText(redactHttpBody(body, secrets))
        expect(sent, name).not.toContain(secret)
        expect(sent, name).not.toContain(quoted)
        expect(sent, name).not.toContain(JSON.stringify(quoted).slice(1, -1))
        expect(sent, name).toContain("[redacted:")
        if (/json/.test(name) && !/raw text/.test(name)) expect(() => JSON.parse(sent), name).not.toThrow()
      }
    }))

  it.effect("a body without a secret is the same body: not decoded, copied or re-encoded", () =>
    Effect.sync(() => {
      const bytes = HttpBody.uint8Array(utf8.encode(json({ messages: [{ content: "nothing to hide" }] })), "application/json")
      expect(redactHttpBody(bytes, secrets)).toBe(bytes)
      const raw = HttpBody.raw(json({ content: "nothing" }), { contentType: "application/json" })
      expect(redactHttpBody(raw, secrets)).toBe(raw)
      const binary = HttpBody.uint8Array(utf8.encode(secret), "image/png")
      expect(redactHttpBody(binary, secrets)).toBe(binary)
    }))

  it.scoped("kern's Chat Completions model behind the door: a secret in the prompt never reaches the server", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.reply(FakeReply.text("ok"))
      const model = layerFromConfig(loadedConfig({ provider: "openrouter", model: "m", baseURL: server.baseURL }, { OPENROUTER_API_KEY: secret })).pipe(Layer.provide(SpendGuard.layerNone))
      const http = RedactingHttpClient.layer.pipe(
        Layer.provide(NodeHttpClient.layerUndici),
        Layer.provide(KnownSecrets.layerFrom({ OPENROUTER_API_KEY: secret, DB_PASSWORD: quoted }))
      )
      const prompt = Prompt.fromMessages([
        Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: `my key is ${secret} and ${quoted}` })] })
      ])
      yield* LanguageModel.generateText({ prompt }).pipe(Effect.provide(model.pipe(Layer.provide(http))))
      const [request] = yield* server.modelRequests
      const body = JSON.stringify(request!.body)
      expect(body).not.toContain(secret)
      expect(body).not.toContain(JSON.stringify(quoted).slice(1, -1))
      expect(body).toContain("[redacted:OPENROUTER_API_KEY]")
      expect(body).toContain("[redacted:DB_PASSWORD]")
    }))
})
