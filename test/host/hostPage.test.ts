import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { runHost } from "../../src/host/Host.js"
import { hostCookieName, withoutHostCookie } from "../../src/host/hostSessions.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { make as makeFakeServer } from "../support/fakeModelServer.js"
import { envValue } from "../support/hostServe.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// kern serve's host page and its session, in process against real agent folders: who may log in, what the host
// session's cookie opens (the host's routes, the hand-over into an agent) and what it does not (an agent's routes), what
// an agent's cookie opens (that agent, nothing of the host's), forged and foreign cookies, Origin on writes, and the
// agents' live list.

const hostile = "<img src=x onerror=\"window.pwned=1\">"

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

const call = (url: string, init: RequestInit = {}) =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(url, { redirect: "manual", ...init })
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

/** `name=value` of a Set-Cookie header. */
const cookiePair = (setCookie: string | null): string => (setCookie ?? "").split(";")[0] ?? ""

const startHost = Effect.gen(function*() {
  const model = yield* makeFakeServer
  const alpha = initAgentWithModel(model.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
  const beta = initAgentWithModel(model.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
  // A folder that is no agent, named with hostile text: its problem carries that text.
  const bad = NodePath.join(makeTempDir(), hostile)
  NodeFs.mkdirSync(bad)
  const home = makeTempDir()
  const webRoot = makeTempDir("kern-web-")
  writeFiles(webRoot, { "host.html": "<!doctype html><title>kern serve</title>HOST PAGE", "assets/host.js": "console.log('host')" })
  const { hostUrl } = yield* runHost({
    settings: { agents: [{ name: "alpha", dir: alpha }, { name: "beta", dir: beta }, { name: "bad", dir: bad }], host: "127.0.0.1", port: 0, idleSeconds: 0 },
    home,
    report: () => Effect.void,
    webRoot
  })
  const token = envValue(NodePath.join(home, ".kern-host/.env"), "KERN_HOST_TOKEN")!
  const alphaToken = envValue(NodePath.join(alpha, ".kern/.env"), "KERN_AUTH_TOKEN")!
  return { hostUrl, token, alphaToken } as const
}).pipe(Effect.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" }))))

const loginCookie = (hostUrl: string, token: string) =>
  Effect.map(call(`${hostUrl}/host/login`, { method: "POST", headers: { authorization: `Bearer ${token}` } }), (a) => cookiePair(a.headers.get("set-cookie")))

describe("kern serve's host page", () => {
  it.live("the page and its files are open; the login takes the host token only, and its cookie is the host's", () =>
    Effect.scoped(Effect.gen(function*() {
      const { hostUrl, token, alphaToken } = yield* startHost
      const page = yield* call(`${hostUrl}/`)
      expect(page.status).toBe(200)
      expect(page.text).toContain("HOST PAGE")
      expect(page.headers.get("content-security-policy")).toContain("script-src 'self'")
      expect((yield* call(`${hostUrl}/assets/host.js`)).status).toBe(200)
      expect((yield* call(`${hostUrl}/assets/nothing.js`)).status).toBe(404)

      // No credential, a wrong one, an agent's token, a token in the URL: no session.
      expect((yield* call(`${hostUrl}/host/login`, { method: "POST" })).status).toBe(401)
      expect((yield* call(`${hostUrl}/host/login`, { method: "POST", headers: { authorization: "Bearer nope" } })).status).toBe(401)
      expect((yield* call(`${hostUrl}/host/login`, { method: "POST", headers: { authorization: `Bearer ${alphaToken}` } })).status).toBe(401)
      const inUrl = yield* call(`${hostUrl}/host/login?token=${token}`, { method: "POST" })
      expect(inUrl.status).toBe(401)
      expect(inUrl.headers.get("set-cookie")).toBeNull()
      expect((yield* call(`${hostUrl}/host/login`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(405)

      const login = yield* call(`${hostUrl}/host/login`, { method: "POST", headers: { authorization: `Bearer ${token}` } })
      expect(login.status).toBe(200)
      const setCookie = login.headers.get("set-cookie") ?? ""
      expect(setCookie.startsWith(`${hostCookieName}=`)).toBe(true)
      for (const part of ["HttpOnly", "SameSite=Strict", "Path=/;"]) expect(setCookie).toContain(part)
      expect(setCookie).not.toContain(token)
      const cookie = cookiePair(setCookie)

      // The session opens the host's routes; a session cannot mint another one.
      const agents = yield* call(`${hostUrl}/agents`, { headers: { cookie } })
      expect(agents.status).toBe(200)
      expect(JSON.parse(agents.text).agents.map((a: { name: string }) => a.name).sort()).toEqual(["alpha", "bad", "beta"])
      expect((yield* call(`${hostUrl}/host`, { headers: { cookie } })).status).toBe(200)
      const again = yield* call(`${hostUrl}/host/login`, { method: "POST", headers: { cookie, origin: hostUrl } })
      expect(again.status).toBe(403)
      expect(again.headers.get("set-cookie")).toBeNull()

      // Forged and foreign cookies open nothing of the host's.
      for (const forged of [`${hostCookieName}=forged`, `${hostCookieName}=`, `${hostCookieName}=${token}`, `kern_session=${cookie.split("=")[1]}`]) {
        expect((yield* call(`${hostUrl}/agents`, { headers: { cookie: forged } })).status, forged).toBe(401)
        expect((yield* call(`${hostUrl}/host`, { headers: { cookie: forged } })).status, forged).toBe(401)
        expect((yield* call(`${hostUrl}/host/open/alpha`, { method: "POST", headers: { cookie: forged, origin: hostUrl } })).status, forged).toBe(401)
      }
      // The host session opens no agent's route: that agent's guard never sees the host's cookie, nor takes its secret.
      expect((yield* call(`${hostUrl}/agents/alpha/status`, { headers: { cookie } })).status).toBe(401)
      expect((yield* call(`${hostUrl}/agents/alpha/status`, { headers: { cookie: `kern_session=${cookie.split("=")[1]}` } })).status).toBe(401)

      // Logged out, the cookie opens nothing.
      expect((yield* call(`${hostUrl}/host/logout`, { method: "POST", headers: { cookie } })).status).toBe(403)
      const logout = yield* call(`${hostUrl}/host/logout`, { method: "POST", headers: { cookie, origin: hostUrl } })
      expect(logout.status).toBe(200)
      expect(logout.headers.get("set-cookie")).toContain("Max-Age=0")
      expect((yield* call(`${hostUrl}/agents`, { headers: { cookie } })).status).toBe(401)
    })), 120_000)

  it.live("a host session opens an agent's UI through that agent's own login; the agent's cookie opens that agent only", () =>
    Effect.scoped(Effect.gen(function*() {
      const { hostUrl, token } = yield* startHost
      const cookie = yield* loginCookie(hostUrl, token)
      expect(cookie.startsWith(`${hostCookieName}=`)).toBe(true)

      // A write with the host's cookie must come from the host's own page.
      expect((yield* call(`${hostUrl}/host/open/alpha`, { method: "POST", headers: { cookie } })).status).toBe(403)
      expect((yield* call(`${hostUrl}/host/open/alpha`, { method: "POST", headers: { cookie, origin: "http://evil.example" } })).status).toBe(403)
      expect((yield* call(`${hostUrl}/host/open/alpha`, { headers: { cookie } })).status).toBe(405)
      expect((yield* call(`${hostUrl}/host/open/nobody`, { method: "POST", headers: { cookie, origin: hostUrl } })).status).toBe(404)

      const open = yield* call(`${hostUrl}/host/open/alpha`, { method: "POST", headers: { cookie, origin: hostUrl } })
      expect(open.status, open.text).toBe(200)
      expect(open.headers.get("cache-control")).toBe("no-store")
      const location = JSON.parse(open.text).url as string
      expect(location).toMatch(/^\/agents\/alpha\/auth\?ticket=[A-Za-z0-9_-]+$/)
      expect(open.headers.get("set-cookie")).toBeNull()

      const redeemed = yield* call(`${hostUrl}${location}`)
      expect(redeemed.status).toBe(303)
      expect(redeemed.headers.get("location")).toBe("/agents/alpha/")
      const agentSetCookie = redeemed.headers.get("set-cookie") ?? ""
      expect(agentSetCookie).toContain("Path=/agents/alpha/")
      const agentCookie = cookiePair(agentSetCookie)
      // The ticket worked once.
      expect((yield* call(`${hostUrl}${location}`)).status).toBe(401)

      expect((yield* call(`${hostUrl}/agents/alpha/status`, { headers: { cookie: agentCookie } })).status).toBe(200)
      expect((yield* call(`${hostUrl}/agents/beta/status`, { headers: { cookie: agentCookie } })).status).toBe(401)
      // An agent's cookie opens no host route.
      expect((yield* call(`${hostUrl}/agents`, { headers: { cookie: agentCookie } })).status).toBe(401)
      expect((yield* call(`${hostUrl}/host`, { headers: { cookie: agentCookie } })).status).toBe(401)
      expect((yield* call(`${hostUrl}/host/events`, { headers: { cookie: agentCookie } })).status).toBe(401)
      expect((yield* call(`${hostUrl}/host/open/beta`, { method: "POST", headers: { cookie: agentCookie, origin: hostUrl } })).status).toBe(401)
      // Both cookies together, as a browser sends them under the agent's path: the agent's app sees its own only.
      expect((yield* call(`${hostUrl}/agents/alpha/status`, { headers: { cookie: `${cookie}; ${agentCookie}` } })).status).toBe(200)

      // A folder that is no agent cannot be opened; its problem is reported as it is, hostile text and all, as data.
      const broken = yield* call(`${hostUrl}/host/open/bad`, { method: "POST", headers: { cookie, origin: hostUrl } })
      expect(broken.status).toBe(503)
      const listed = yield* call(`${hostUrl}/agents`, { headers: { cookie } })
      expect(listed.headers.get("content-type")).toContain("application/json")
      expect(listed.headers.get("x-content-type-options")).toBe("nosniff")
      const bad = JSON.parse(listed.text).agents.find((a: { name: string }) => a.name === "bad")
      expect(bad.problem).toContain(hostile)
    })), 120_000)

  it.live("the host's event stream gives the list at once and again when an agent changes state", () =>
    Effect.scoped(Effect.gen(function*() {
      const { hostUrl, token, alphaToken } = yield* startHost
      const cookie = yield* loginCookie(hostUrl, token)
      expect((yield* call(`${hostUrl}/host/events`)).status).toBe(401)
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      const response = yield* Effect.promise(() => fetch(`${hostUrl}/host/events`, { headers: { cookie }, signal: controller.signal }))
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      const reader = response.body!.getReader()
      let text = ""
      const readUntil = (check: (all: string) => boolean) =>
        Effect.promise(async () => {
          while (!check(text)) {
            const chunk = await reader.read()
            if (chunk.done) return false
            text += new TextDecoder().decode(chunk.value)
          }
          return true
        })
      expect(yield* readUntil((all) => all.includes("event: agents") && all.includes("\"alpha\""))).toBe(true)
      // Waking alpha (any request with its token) shows in the stream.
      expect((yield* call(`${hostUrl}/agents/alpha/health`, { headers: { authorization: `Bearer ${alphaToken}` } })).status).toBe(200)
      expect(yield* readUntil((all) => all.includes("{\"name\":\"alpha\",\"state\":\"live\"}"))).toBe(true)
    })), 120_000)

  it("an agent's app is handed the Cookie header without the host session's cookie", () => {
    expect(withoutHostCookie(`${hostCookieName}=abc`)).toBeUndefined()
    expect(withoutHostCookie(`kern_session=x; ${hostCookieName}=abc; other=1`)).toBe("kern_session=x; other=1")
    expect(withoutHostCookie(`${hostCookieName}=abc;kern_session=x`)).toBe("kern_session=x")
    expect(withoutHostCookie("kern_session=x")).toBe("kern_session=x")
  })
})
