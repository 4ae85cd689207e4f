import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Authorization } from "../../../src/channels/web/Authorization.js"
import { KernApi } from "../../../src/channels/web/KernApi.js"
import { request, startServer, token } from "./harness.js"
import { nonCanonical, rawRequest } from "./rawHttp.js"

interface Route {
  readonly method: string
  readonly path: string
}

/** The server's routes, read from the contract its router is built from (not a list kept here), by who may call them. */
const contractRoutes = (): { readonly guarded: ReadonlyArray<Route>; readonly open: ReadonlyArray<Route> } => {
  const guarded: Array<Route> = []
  const open: Array<Route> = []
  HttpApi.reflect(KernApi, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, middleware }) => {
      ;([...middleware].some((m) => m.key === Authorization.key) ? guarded : open).push({ method: endpoint.method, path: endpoint.path })
    }
  })
  return { guarded, open }
}

describe("HTTP: who may call a route is part of the route", () => {
  it("every route of the contract carries the Authorization middleware but the health check and the login exchange", () => {
    const { guarded, open } = contractRoutes()
    expect(open).toEqual([{ method: "GET", path: "/health" }, { method: "GET", path: "/auth" }])
    expect(guarded.length).toBeGreaterThanOrEqual(18)
  })
})

describe("HTTP: one path, one decision", () => {
  it.live("every guarded route, spelled in any non-canonical form, is answered 400 with no data, token or not", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({ sessionMessages: 4 })
      const routes = contractRoutes().guarded
      const gets = routes.filter((route) => route.method === "GET").map((route) => route.path)
      // The router's own list: the ones an attacker went for are in it, and nothing open is.
      expect(gets).toEqual(expect.arrayContaining(["/events", "/history", "/recall/search", "/sessions/:id/activity", "/status"]))
      expect(gets.length).toBeGreaterThanOrEqual(13)
      expect(gets).not.toContain("/health")
      const sessionId = (yield* server.runtime.currentSession).id
      // A stored file of the conversation, for GET /media/:id.
      const stored = yield* request(`${server.base}/message`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "a file", files: [{ name: "a.txt", data: Buffer.from("hello").toString("base64") }] })
      })
      const mediaId = (stored.json as { files: ReadonlyArray<{ id: string }> }).files[0]!.id
      const host = `Host: 127.0.0.1:${server.port}`
      let sent = 0
      for (const route of routes) {
        const path = route.path === "/media/:id" ? `/media/${mediaId}` : route.path.replace(":id", sessionId)
        // The canonical spelling reaches the route (with the token) and is refused without it.
        if (route.method === "GET" && route.path !== "/events") {
          const plain = yield* rawRequest(server.port, { target: `${path}?q=hello`, headers: [host, `Authorization: Bearer ${token}`] })
          expect(plain.status, `${route.method} ${path}`).toBe(200)
        }
        const refused = yield* rawRequest(server.port, { method: route.method, target: path, headers: [host] })
        expect(refused.status, `${route.method} ${path}`).toBe(401)
        for (const target of nonCanonical(path)) {
          for (const auth of [[], [`Authorization: Bearer ${token}`]]) {
            const answer = yield* rawRequest(server.port, { method: route.method, target, headers: [host, ...auth, "Content-Length: 0"] })
            sent++
            expect(answer.status, `${route.method} ${target}`).toBe(400)
            expect(JSON.parse(answer.body), target).toEqual({ error: expect.stringContaining("not in canonical form") })
            expect(answer.head).toContain("content-security-policy")
          }
        }
      }
      expect(sent).toBeGreaterThan(1000)
    })), 120_000)

  it.live("the open routes answer their canonical form, and refuse the others the same way", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer()
      const host = `Host: 127.0.0.1:${server.port}`
      expect((yield* rawRequest(server.port, { target: "/health", headers: [host] })).status).toBe(200)
      expect((yield* rawRequest(server.port, { target: "/", headers: [host] })).status).toBe(200)
      for (const target of ["/health/", "/health;", "/./health", "/%68ealth", "/assets/..%2f..%2fkern.db", "/assets/%2e%2e/x", "/assets//x", "/auth;?ticket=x"]) {
        expect((yield* rawRequest(server.port, { target, headers: [host] })).status, target).toBe(400)
      }
    })))
})

describe("HTTP: the Host header", () => {
  it.live("a name or address that is not this server's is refused (421), an empty, missing or doubled Host too (400)", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({ sessionMessages: 2 })
      const port = server.port
      const foreign = [
        "evil.example",
        `evil.example:${port}`,
        "EVIL.example:80",
        // DNS-rebinding names: they resolve to 127.0.0.1, the browser still sends its own name.
        `127.0.0.1.nip.io:${port}`,
        `7f000001.c0a80001.rbndr.us:${port}`,
        `localhost.evil.example:${port}`,
        `localhost.:${port}`,
        "kern.attacker.test",
        // Addresses that are not loopback.
        "10.0.0.1",
        `192.168.1.5:${port}`,
        `0.0.0.0:${port}`,
        "169.254.169.254",
        "[::2]",
        `[2001:db8::1]:${port}`,
        "[::ffff:7f00:1]"
      ]
      const malformed = [
        ["Host: "],
        ["Host:"],
        [`Host: 127.0.0.1:${port}`, "Host: evil.example"],
        ["Host: evil.example", `Host: 127.0.0.1:${port}`],
        [`Host: 127.0.0.1:${port}`, `Host: 127.0.0.1:${port}`],
        [`Host: 127.0.0.1:${port}:1`],
        [`Host: user@127.0.0.1:${port}`],
        [`Host: 127.0.0.1:${port}/x`],
        [`Host: 127.0.0.1 evil.example`],
        // No Host at all (HTTP/1.1 requires one; Node refuses it before kern sees it).
        []
      ]
      for (const target of ["/health", "/status", "/history"]) {
        for (const name of foreign) {
          const answer = yield* rawRequest(port, { target, headers: [`Host: ${name}`, `Authorization: Bearer ${token}`] })
          expect(answer.status, `${target} Host: ${name}`).toBe(421)
          expect(JSON.parse(answer.body)).toEqual({ error: expect.stringContaining("does not answer to the host") })
        }
        for (const headers of malformed) {
          const answer = yield* rawRequest(port, { target, headers: [...headers, `Authorization: Bearer ${token}`] })
          expect(answer.status, `${target} ${JSON.stringify(headers)}`).toBe(400)
          expect(answer.body).not.toContain("sessionId")
          expect(answer.body).not.toContain("\"ok\"")
        }
      }
      // The loopback names, with or without the port, in any case.
      for (const name of ["127.0.0.1", `127.0.0.1:${port}`, "localhost", `localhost:${port}`, `LOCALHOST:${port}`, "[::1]", `[::1]:${port}`]) {
        const answer = yield* rawRequest(port, { target: "/status", headers: [`Host: ${name}`, `Authorization: Bearer ${token}`] })
        expect(answer.status, `${name}: ${answer.head}${answer.body.slice(0, 300)}`).toBe(200)
      }
      // The client and the UI's own requests carry the server's address: they work as before.
      expect((yield* server.client.status).runtime.port).toBe(port)
      expect((yield* rawRequest(port, { target: "/health", headers: [`Host: localhost:${port}`] })).status).toBe(200)
    })))
})
