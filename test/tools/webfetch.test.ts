import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { GuardedHttpClient } from "../../src/tools/guardedHttpClient.js"
import * as HostResolver from "../../src/tools/HostResolver.js"
import { webfetch, webfetchMaxChars } from "../../src/tools/webfetch.js"
import { testServer } from "./httpServer.js"
import { makeWorkspace, toolsLayer } from "./support.js"

const root = makeWorkspace()
const fetchArgs = (url: string) => ({ url, timeout: 10_000 })

const routes = {
  "/page.html": (_: unknown, res: import("node:http").ServerResponse) =>
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end("<html><head><script>evil()</script></head><body><h1>Title</h1><p>Some <b>bold</b> <a href=\"/x\">link</a></p></body></html>"),
  "/data.json": (_: unknown, res: import("node:http").ServerResponse) =>
    res.writeHead(200, { "content-type": "application/json" }).end("{\"a\":1,\"b\":[true,null]}"),
  "/loop": (_: unknown, res: import("node:http").ServerResponse) => res.writeHead(302, { location: "/loop" }).end(),
  "/hop1": (_: unknown, res: import("node:http").ServerResponse) => res.writeHead(301, { location: "/hop2" }).end(),
  "/hop2": (_: unknown, res: import("node:http").ServerResponse) => res.writeHead(307, { location: "/data.json" }).end(),
  "/big": (_: unknown, res: import("node:http").ServerResponse) => {
    res.writeHead(200, { "content-type": "text/plain" })
    const chunk = "0123456789".repeat(6_554) + "\n"
    let sent = 0
    const pump = () => {
      while (sent < 700) {
        sent++
        if (!res.write(chunk)) return res.once("drain", pump)
      }
      res.end()
    }
    pump()
  },
  "/long.txt": (_: unknown, res: import("node:http").ServerResponse) =>
    res.writeHead(200, { "content-type": "text/plain" }).end("y".repeat(webfetchMaxChars + 1234)),
  "/to-metadata": (_: unknown, res: import("node:http").ServerResponse) =>
    res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end(),
  "/server-error": (_: unknown, res: import("node:http").ServerResponse) => res.writeHead(503).end("down")
}

const loopbackAllowed = toolsLayer(root, { allowPrivateHosts: true }, { memoryDb: true })

describe("webfetch", () => {
  it.scoped("converts HTML to Markdown, drops scripts; raw keeps the HTML", () =>
    Effect.gen(function*() {
      const { origin } = yield* testServer(routes)
      const out = yield* webfetch(fetchArgs(`${origin}/page.html`)).pipe(Effect.provide(loopbackAllowed))
      assert.strictEqual(out.status, 200)
      assert.include(out.text, "# Title")
      assert.include(out.text, "**bold**")
      assert.include(out.text, "[link](/x)")
      assert.notInclude(out.text, "evil")
      const raw = yield* webfetch({ ...fetchArgs(`${origin}/page.html`), raw: true }).pipe(Effect.provide(loopbackAllowed))
      assert.include(raw.text, "<h1>Title</h1>")
    }))

  it.scoped("returns JSON as it is and follows redirects to the final URL", () =>
    Effect.gen(function*() {
      const { origin } = yield* testServer(routes)
      const out = yield* webfetch(fetchArgs(`${origin}/hop1`)).pipe(Effect.provide(loopbackAllowed))
      assert.strictEqual(out.text, "{\"a\":1,\"b\":[true,null]}")
      assert.strictEqual(out.url, `${origin}/data.json`)
    }))

  it.scoped("a redirect loop stops after 5 redirects", () =>
    Effect.gen(function*() {
      const { origin } = yield* testServer(routes)
      const error = yield* webfetch(fetchArgs(`${origin}/loop`)).pipe(Effect.provide(loopbackAllowed), Effect.flip)
      assert.strictEqual(error.code, "NETWORK_ERROR")
      assert.include(error.message, "too many redirects")
    }))

  it.scoped("stops downloading at 5 MB and truncates the result at 50,000 characters", () =>
    Effect.gen(function*() {
      const { origin } = yield* testServer(routes)
      const big = yield* webfetch(fetchArgs(`${origin}/big`)).pipe(Effect.provide(loopbackAllowed))
      assert.isTrue(big.truncated)
      assert.include(big.text, "download stopped at 5242880 bytes")
      const long = yield* webfetch(fetchArgs(`${origin}/long.txt`)).pipe(Effect.provide(loopbackAllowed))
      assert.include(long.text, `showing ${webfetchMaxChars} of ${webfetchMaxChars + 1234} characters`)
      assert.isTrue(long.text.length < webfetchMaxChars + 200)
    }))

  it.scoped("maps a 503 to a retryable NETWORK_ERROR and a 404 to NOT_FOUND", () =>
    Effect.gen(function*() {
      const { origin } = yield* testServer(routes)
      const down = yield* webfetch(fetchArgs(`${origin}/server-error`)).pipe(Effect.provide(loopbackAllowed), Effect.flip)
      assert.strictEqual(down.code, "NETWORK_ERROR")
      assert.isTrue(down.retryable)
      const missing = yield* webfetch(fetchArgs(`${origin}/nope`)).pipe(Effect.provide(loopbackAllowed), Effect.flip)
      assert.strictEqual(missing.code, "NOT_FOUND")
    }))
})

describe("webfetch address guard", () => {
  const guarded = (resolver = HostResolver.layerStatic({ localhost: ["127.0.0.1"] })) =>
    toolsLayer(root, {}, { memoryDb: true, resolver })

  it.scoped("refuses loopback, private and metadata addresses when private hosts are not allowed", () =>
    Effect.gen(function*() {
      const { origin } = yield* testServer(routes)
      const resolver = HostResolver.layerStatic({ "evil.example": ["93.184.216.34", "10.0.0.7"], localhost: ["127.0.0.1"] })
      for (const url of [`${origin}/page.html`, "http://localhost/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/", "http://evil.example/", "http://[::ffff:127.0.0.1]/", "http://[::127.0.0.1]/", "http://[2002:7f00:1::]/", "http://[2002:a9fe:a9fe::1]/", "http://[64:ff9b:1::a00:1]/"]) {
        const error = yield* webfetch(fetchArgs(url)).pipe(Effect.provide(guarded(resolver)), Effect.flip)
        assert.strictEqual(error.code, "PERMISSION_DENIED", url)
      }
      const scheme = yield* webfetch(fetchArgs("file:///etc/passwd")).pipe(Effect.provide(guarded()), Effect.flip)
      assert.strictEqual(scheme.code, "VALIDATION_ERROR")
    }))

  it.scoped("checks every redirect: a public page redirecting to loopback or to metadata is refused", () =>
    Effect.gen(function*() {
      const { origin } = yield* testServer({
        ...routes,
        "/to-loopback": (_, res) => res.writeHead(302, { location: `${origin}/page.html` }).end()
      })
      // public.example resolves to a public address; this client carries its requests to the local server.
      const viaLocal = Layer.effect(
        GuardedHttpClient,
        Effect.map(GuardedHttpClient, (client) =>
          HttpClient.mapRequest(client, (request) =>
            request.url.startsWith("http://public.example")
              ? HttpClientRequest.setUrl(request, request.url.replace("http://public.example", origin))
              : request))
      )
      const layer = Layer.provideMerge(viaLocal, guarded(HostResolver.layerStatic({ "public.example": ["93.184.216.34"] })))
      const allowed = yield* webfetch(fetchArgs("http://public.example/data.json")).pipe(Effect.provide(layer))
      assert.include(allowed.text, "\"a\":1")
      const toLoopback = yield* webfetch(fetchArgs("http://public.example/to-loopback")).pipe(Effect.provide(layer), Effect.flip)
      assert.strictEqual(toLoopback.code, "PERMISSION_DENIED")
      assert.include(toLoopback.message, "127.0.0.1")
      const toMetadata = yield* webfetch(fetchArgs(`${origin}/to-metadata`)).pipe(Effect.provide(loopbackAllowed), Effect.flip)
      assert.strictEqual(toMetadata.code, "PERMISSION_DENIED")
      assert.include(toMetadata.message, "169.254.169.254")
    }))

  it.scoped("the connection resolves the name again and is refused when it now points inward (DNS rebinding)", () =>
    Effect.gen(function*() {
      let hits = 0
      const { origin } = yield* testServer({
        "/secret": (_, res) => {
          hits++
          res.writeHead(200, { "content-type": "text/plain" }).end("internal")
        }
      })
      const port = new URL(origin).port
      // The first answer (webfetch's check) is public; every later one (the connection's) is loopback.
      let queries = 0
      const rebinding = Layer.succeed(HostResolver.HostResolver, {
        resolve: () => Effect.sync(() => (queries++ === 0 ? ["93.184.216.34"] : ["127.0.0.1"]))
      })
      const error = yield* webfetch(fetchArgs(`http://rebind.example:${port}/secret`)).pipe(
        Effect.provide(guarded(rebinding)),
        Effect.flip
      )
      assert.strictEqual(error.code, "PERMISSION_DENIED")
      assert.include(error.message, "127.0.0.1")
      assert.isFalse(error.retryable)
      assert.strictEqual(hits, 0)
      assert.isAtLeast(queries, 2)
    }))

  it.scoped("connections go through the agent's resolver: a name only it knows is reached when private hosts are allowed", () =>
    Effect.gen(function*() {
      const { origin } = yield* testServer(routes)
      const port = new URL(origin).port
      const layer = toolsLayer(root, { allowPrivateHosts: true }, {
        memoryDb: true,
        resolver: HostResolver.layerStatic({ "kern-test.internal": ["127.0.0.1"] })
      })
      const out = yield* webfetch(fetchArgs(`http://kern-test.internal:${port}/data.json`)).pipe(Effect.provide(layer))
      assert.include(out.text, "\"a\":1")
      const unknown = yield* webfetch(fetchArgs(`http://other.internal:${port}/data.json`)).pipe(
        Effect.provide(layer),
        Effect.flip
      )
      assert.strictEqual(unknown.code, "NETWORK_ERROR")
    }))
})
