import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, request, startServer, token } from "./harness.js"

const cookieFrom = (setCookie: string | null) => (setCookie ?? "").split(";")[0] ?? ""

/** Logs a browser in: a ticket from the token holder, exchanged at /auth for the session cookie. */
const login = (base: string) =>
  Effect.gen(function*() {
    const issued = yield* request(`${base}/auth/ticket`, { method: "POST", headers: bearer })
    expect(issued.status).toBe(200)
    const { ticket, url } = issued.json as { ticket: string; url: string }
    expect(url).toBe(`${base}/auth?ticket=${ticket}`)
    const exchanged = yield* request(url)
    return { ticket, url, exchanged, cookie: cookieFrom(exchanged.headers.get("set-cookie")) }
  })

describe("HTTP API: who may call it", () => {
  it.live("no credentials, a wrong token, or the token in the query string: 401; the right bearer token: 200; /health is open", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* startServer()
      expect((yield* request(`${base}/health`)).status).toBe(200)
      for (const path of ["/status", "/history", "/sessions", "/usage", "/context/system", "/notes/summary", "/notes", "/users", "/events"]) {
        const none = yield* request(`${base}${path}`)
        expect(none.status, path).toBe(401)
        expect(none.json).toMatchObject({ error: expect.stringContaining("not logged in") })
      }
      const wrong = yield* request(`${base}/status`, { headers: { authorization: `Bearer ${token}x` } })
      expect(wrong.status).toBe(401)
      const shorter = yield* request(`${base}/status`, { headers: { authorization: `Bearer ${token.slice(0, -1)}` } })
      expect(shorter.status).toBe(401)
      for (const name of ["token", "access_token", "key"]) {
        const inQuery = yield* request(`${base}/status?${name}=${token}`)
        expect(inQuery.status, name).toBe(401)
        expect(inQuery.json).toMatchObject({ error: expect.stringContaining("never accepted in the URL") })
        // Even with the right header, a token in the URL is refused: it would end up in logs and history.
        expect((yield* request(`${base}/status?${name}=${token}`, { headers: bearer })).status).toBe(401)
      }
      const right = yield* request(`${base}/status`, { headers: bearer })
      expect(right.status).toBe(200)
      expect(right.json).toMatchObject({ runtime: { command: "kern test", inbox: 0 } })
      expect((yield* request(`${base}/message`, { method: "POST", body: JSON.stringify({ text: "hi" }) })).status).toBe(401)
    })))

  it.live("a ticket logs a browser in once: 303 to / with an HttpOnly SameSite=Strict cookie; used again, 401", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* startServer()
      const { cookie, exchanged, url } = yield* login(base)
      expect(exchanged.status).toBe(303)
      expect(exchanged.headers.get("location")).toBe("/")
      const setCookie = exchanged.headers.get("set-cookie") ?? ""
      expect(setCookie).toMatch(/^kern_session=[A-Za-z0-9_-]{20,};/)
      expect(setCookie).toContain("HttpOnly")
      expect(setCookie).toContain("SameSite=Strict")
      expect(setCookie).toContain("Path=/")
      expect((yield* request(`${base}/status`, { headers: { cookie } })).status).toBe(200)
      const again = yield* request(url)
      expect(again.status).toBe(401)
      expect(again.headers.get("set-cookie")).toBeNull()
      expect((yield* request(`${base}/status`, { headers: { cookie: "kern_session=forged" } })).status).toBe(401)
      expect((yield* request(`${base}/auth`)).status).toBe(400)
    })))

  it.live("a browser session outlives a restart of the server: a second server on the same kern.db takes its cookie", () =>
    Effect.gen(function*() {
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const { base, dir } = yield* startServer()
        const { cookie, exchanged } = yield* login(base)
        expect(exchanged.headers.get("set-cookie")).toMatch(/; Max-Age=2592000(;|$)/)
        expect((yield* request(`${base}/status`, { headers: { cookie } })).status).toBe(200)
        return { cookie, dir }
      }))
      // The first server and its agent are gone (the scope closed); the same folder is served again.
      yield* Effect.scoped(Effect.gen(function*() {
        const { base } = yield* startServer({ dir: first.dir })
        expect((yield* request(`${base}/status`, { headers: { cookie: first.cookie } })).status).toBe(200)
        expect((yield* request(`${base}/history`, { headers: { cookie: first.cookie } })).status).toBe(200)
        expect((yield* request(`${base}/status`, { headers: { cookie: "kern_session=forged" } })).status).toBe(401)
      }))
    }))

  it.live("a ticket expires (a short TTL here; 60 s by default, tested on the Clock in auth.test.ts)", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* startServer({ ticketTtlMs: 200 })
      const issued = yield* request(`${base}/auth/ticket`, { method: "POST", headers: bearer })
      const { url } = issued.json as { url: string }
      yield* Effect.sleep("300 millis")
      expect((yield* request(url)).status).toBe(401)
    })))

  it.live("a cookie may read, but may change state only from the agent's own origin; it cannot mint tickets", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, port } = yield* startServer()
      const { cookie } = yield* login(base)
      const post = (headers: Record<string, string>) =>
        request(`${base}/message`, { method: "POST", headers: { cookie, "content-type": "application/json", ...headers }, body: JSON.stringify({ text: "hi" }) })
      const noOrigin = yield* post({})
      expect(noOrigin.status).toBe(403)
      expect(noOrigin.json).toMatchObject({ error: expect.stringContaining("Origin") })
      expect((yield* post({ origin: "https://evil.example" })).status).toBe(403)
      expect((yield* post({ origin: "null" })).status).toBe(403)
      expect((yield* post({ origin: `http://127.0.0.1:${port + 1}` })).status).toBe(403)
      expect((yield* post({ origin: `http://localhost:${port}` })).status).toBe(202)
      expect((yield* post({ origin: base })).status).toBe(202)
      const regenerate = yield* request(`${base}/notes/summary`, { method: "POST", headers: { cookie } })
      expect(regenerate.status).toBe(403)
      const mint = yield* request(`${base}/auth/ticket`, { method: "POST", headers: { cookie, origin: base } })
      expect(mint.status).toBe(403)
    })))

  it.live("security headers on every answer: API, errors, the UI page, the open routes", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* startServer()
      const answers = [
        yield* request(`${base}/health`),
        yield* request(`${base}/`),
        yield* request(`${base}/status`),
        yield* request(`${base}/status`, { headers: bearer }),
        yield* request(`${base}/no/such/route`, { headers: bearer }),
        yield* request(`${base}/assets/app.js`)
      ]
      for (const answer of answers) {
        const csp = answer.headers.get("content-security-policy") ?? ""
        expect(csp).toContain("default-src 'self'")
        expect(csp).toContain("frame-ancestors 'none'")
        expect(csp).not.toContain("unsafe-inline")
        expect(answer.headers.get("x-content-type-options")).toBe("nosniff")
        expect(answer.headers.get("referrer-policy")).toBe("no-referrer")
      }
    })))

  it.live("CORS is off unless corsOrigins lists the origin", () =>
    Effect.scoped(Effect.gen(function*() {
      const off = yield* startServer()
      const plain = yield* request(`${off.base}/status`, { headers: { ...bearer, origin: "https://app.example" } })
      expect(plain.headers.get("access-control-allow-origin")).toBeNull()
      expect((yield* request(`${off.base}/status`, { method: "OPTIONS", headers: { origin: "https://app.example" } })).status).toBe(403)
      const on = yield* startServer({ corsOrigins: ["https://app.example"] })
      const allowed = yield* request(`${on.base}/status`, { headers: { ...bearer, origin: "https://app.example" } })
      expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example")
      const preflight = yield* request(`${on.base}/message`, { method: "OPTIONS", headers: { origin: "https://app.example" } })
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization")
      const other = yield* request(`${on.base}/status`, { headers: { ...bearer, origin: "https://other.example" } })
      expect(other.headers.get("access-control-allow-origin")).toBeNull()
    })))
})
