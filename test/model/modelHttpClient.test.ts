import { HttpBody, HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Either, Layer, Option, Scope } from "effect"
import * as NodeHttp from "node:http"
import type { Readable } from "node:stream"
import { KnownSecrets } from "../../src/config/KnownSecrets.js"
import * as ModelHttpClient from "../../src/model/ModelHttpClient.js"
import * as RedactingHttpClient from "../../src/model/RedactingHttpClient.js"

/** A server on 127.0.0.1: each request's body is recorded; `handle` answers it. */
const server = (handle: (request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse, body: string) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly bodies: Array<string>; readonly server: NodeHttp.Server }>((resume) => {
      const bodies: Array<string> = []
      const http = NodeHttp.createServer((request, response) => {
        let body = ""
        request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
        request.on("end", () => {
          bodies.push(body)
          handle(request, response, body)
        })
      })
      http.listen(0, "127.0.0.1", () => {
        const address = http.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, bodies, server: http }))
      })
    }),
    ({ server }) => Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )

/** Every chunk a pull gives until the body ends, as text. */
const readAll = (pull: ModelHttpClient.BodyPull) =>
  Effect.gen(function*() {
    const decoder = new TextDecoder()
    let text = ""
    while (true) {
      const next = yield* Effect.either(pull)
      if (Either.isLeft(next)) {
        if (Option.isNone(next.left)) return text
        return yield* next.left.value
      }
      for (const bytes of Chunk.toReadonlyArray(next.right)) text += decoder.decode(bytes, { stream: true })
    }
  })

const post = (url: string, text: string) =>
  HttpClientRequest.post(url).pipe(HttpClientRequest.setBody(HttpBody.text(text, "application/json")))

const lean = ModelHttpClient.layer
const platform = NodeHttpClient.layerUndici

describe("ModelHttpClient", () => {
  it.scoped("a body read by its pull is what @effect/platform-node's client reads as a Stream, chunk by chunk as it comes", () =>
    Effect.gen(function*() {
      const frames = Array.from({ length: 20 }, (_, i) => `data: {"i":${i},"text":"${"é€😀".repeat(i)}"}\n\n`)
      const { url } = yield* server((_, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        let i = 0
        const next = () => (i < frames.length ? response.write(frames[i++], () => setImmediate(next)) : response.end())
        next()
      })
      const read = (layer: Layer.Layer<HttpClient.HttpClient>) =>
        Effect.scoped(Effect.gen(function*() {
          const response = yield* HttpClient.execute(post(url, "{}"))
          return yield* readAll(yield* ModelHttpClient.pullOf(response))
        })).pipe(Effect.provide(layer))
      const viaLean = yield* read(lean)
      expect(viaLean).toBe(frames.join(""))
      expect(viaLean).toBe(yield* read(platform))
    }))

  it.scoped("closing the scope of a pull destroys a body not read to its end: the server sees the connection close", () =>
    Effect.gen(function*() {
      const closed = yield* Deferred.make<void>()
      const { url } = yield* server((_, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.write("data: first\n\n")
        // Never ends: only the client letting go ends it.
        response.on("close", () => Effect.runSync(Deferred.succeed(closed, undefined)))
      })
      const scope = yield* Scope.make()
      const first = yield* Effect.gen(function*() {
        const response = yield* HttpClient.execute(post(url, "{}"))
        const pull = yield* ModelHttpClient.pullOf(response)
        return new TextDecoder().decode(Chunk.toReadonlyArray(yield* pull)[0])
      }).pipe(Scope.extend(scope))
      expect(first).toBe("data: first\n\n")
      yield* Scope.close(scope, Effect.void as never)
      // The client's dispatcher (the layer, provided around the whole test) still holds its connections.
      yield* Deferred.await(closed)
    }).pipe(Effect.provide(lean)))

  it.scoped("a body whose end has arrived is read away when its pull's scope closes, not destroyed: no abort error", () =>
    Effect.gen(function*() {
      const { url } = yield* server((_, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end("data: last\n\n")
      })
      const scope = yield* Scope.make()
      // The body, as undici gives it: what it emits is what this test is about.
      const { body, text } = yield* Effect.gen(function*() {
        const response = yield* HttpClient.execute(post(url, "{}"))
        const body = (response as unknown as { readonly source: { readonly body: Readable } }).source.body
        const pull = yield* ModelHttpClient.pullOf(response)
        return { body, text: new TextDecoder().decode(Chunk.toReadonlyArray(yield* pull)[0]) }
      }).pipe(Scope.extend(scope))
      // The last event was read; its consumer stops there, as a model step does after the answer's last event.
      expect(text).toBe("data: last\n\n")
      const errors: Array<unknown> = []
      body.on("error", (error) => errors.push(error))
      // Ended by itself, `end` comes before `close`; destroyed, `close` comes alone.
      const settled = yield* Deferred.make<"end" | "close">()
      body.once("end", () => Effect.runSync(Deferred.succeed(settled, "end")))
      body.once("close", () => Effect.runSync(Deferred.succeed(settled, "close")))
      // Its end arrives after the bytes (the chunked body's last frame), read or not.
      const arrived = (body as Readable & { readonly _readableState: { readonly ended: boolean } })._readableState
      while (!arrived.ended) yield* Effect.sleep("5 millis")
      expect(body.readableEnded).toBe(false)
      yield* Scope.close(scope, Effect.void as never)
      expect(yield* Deferred.await(settled)).toBe("end")
      expect(errors).toEqual([])
    }).pipe(Effect.provide(lean)))

  it.scoped("an interrupted request is aborted: the server sees the connection close", () =>
    Effect.gen(function*() {
      const arrived = yield* Deferred.make<void>()
      const closed = yield* Deferred.make<void>()
      const { url } = yield* server((_, response) => {
        // Answers nothing: the client gives up.
        response.on("close", () => Effect.runSync(Deferred.succeed(closed, undefined)))
        Effect.runSync(Deferred.succeed(arrived, undefined))
      })
      const fiber = yield* Effect.fork(HttpClient.execute(post(url, "{}")).pipe(Effect.scoped))
      yield* Deferred.await(arrived)
      yield* fiber.interruptAsFork(fiber.id())
      // The client's dispatcher (the layer, provided around the whole test) still holds its connections.
      yield* Deferred.await(closed)
    }).pipe(Effect.provide(lean)))

  it.scoped("a response read whole (text twice, json) reads as @effect/platform-node's does; status and headers too", () =>
    Effect.gen(function*() {
      const { url } = yield* server((_, response) => {
        response.writeHead(429, { "content-type": "application/json", "retry-after": "5", "set-cookie": "a=1" })
        response.end(JSON.stringify({ error: { message: "slow down" } }))
      })
      const read = (layer: Layer.Layer<HttpClient.HttpClient>) =>
        Effect.gen(function*() {
          const response = yield* HttpClient.execute(post(url, "{}"))
          const text = yield* response.text
          return { status: response.status, retryAfter: response.headers["retry-after"], cookie: response.cookies, text, again: yield* response.text, json: yield* response.json }
        }).pipe(Effect.scoped, Effect.provide(layer))
      const viaLean = yield* read(lean)
      expect(viaLean.status).toBe(429)
      expect(viaLean.retryAfter).toBe("5")
      expect(viaLean.again).toBe(viaLean.text)
      expect(viaLean.json).toEqual({ error: { message: "slow down" } })
      expect(viaLean).toEqual(yield* read(platform))
    }))

  it.scoped("nothing listening is a Transport RequestError, as @effect/platform-node gives it", () =>
    Effect.gen(function*() {
      const { server: http, url } = yield* server(() => {})
      yield* Effect.async<void>((resume) => {
        http.close(() => resume(Effect.void))
      })
      const fail = (layer: Layer.Layer<HttpClient.HttpClient>) =>
        HttpClient.execute(post(url, "{}")).pipe(Effect.scoped, Effect.provide(layer), Effect.flip)
      const error = yield* fail(lean)
      expect(error._tag).toBe("RequestError")
      expect(error._tag === "RequestError" ? error.reason : undefined).toBe("Transport")
      expect(error.message).toBe((yield* fail(platform)).message)
    }))

  it.scoped("behind RedactingHttpClient no known secret reaches the server in a body", () =>
    Effect.gen(function*() {
      const { bodies, url } = yield* server((_, response) => response.end("{}"))
      const secrets = Layer.succeed(KnownSecrets, { secrets: [{ name: "OPENROUTER_API_KEY", value: "sk-or-secret-123456", origin: "agent" }] })
      yield* HttpClient.execute(post(url, JSON.stringify({ messages: [{ content: "my key is sk-or-secret-123456" }] }))).pipe(
        Effect.flatMap((response) => response.text),
        Effect.scoped,
        Effect.provide(RedactingHttpClient.layer.pipe(Layer.provide(Layer.merge(lean, secrets))))
      )
      expect(bodies).toHaveLength(1)
      expect(bodies[0]).not.toContain("sk-or-secret-123456")
      expect(bodies[0]).toContain("[redacted:OPENROUTER_API_KEY]")
    }))

  it.effect("a response of another client is pulled through its Stream", () =>
    Effect.gen(function*() {
      const response = HttpClientResponse.fromWeb(HttpClientRequest.get("http://127.0.0.1/"), new Response("abc"))
      const text = yield* Effect.scoped(Effect.flatMap(ModelHttpClient.pullOf(response), readAll))
      expect(text).toBe("abc")
    }))
})
