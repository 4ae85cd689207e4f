import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { runHost } from "../../src/host/Host.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { make as makeFakeServer } from "../support/fakeModelServer.js"
import { envValue } from "../support/hostServe.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// kern serve must not tell who it hosts to whoever lacks an agent's credentials: every probe of `/agents/<name>/…`
// answers the same for a live agent, a passive one and a name hosted nowhere (status, body, type), and wakes nobody.
// Only the host's own credentials (or the agent's) learn more.

interface Answer {
  readonly status: number
  readonly type: string
  readonly body: string
  readonly setCookie: string
}

/** A request with its target sent exactly as written (no URL normalization on the way). */
const call = (port: number, method: string, target: string, headers: Record<string, string> = {}, body?: string) =>
  Effect.async<Answer>((resume) => {
    const request = NodeHttp.request({ host: "127.0.0.1", port, method, path: target, headers }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
      response.on("end", () =>
        resume(Effect.succeed({
          status: response.statusCode ?? 0,
          type: String(response.headers["content-type"] ?? ""),
          body: text,
          setCookie: String(response.headers["set-cookie"] ?? "")
        })))
    })
    request.on("error", (error) => resume(Effect.succeed({ status: 0, type: "", body: error.message, setCookie: "" })))
    request.end(body)
  })

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const cookiePair = (setCookie: string): string => setCookie.split(";")[0] ?? ""

const env = Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" }))

const folders = Effect.gen(function*() {
  const model = yield* makeFakeServer
  const make = () => initAgentWithModel(model.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
  const webRoot = makeTempDir("kern-web-")
  writeFiles(webRoot, { "index.html": "<!doctype html><title>kern</title>AGENT PAGE", "assets/app.js": "console.log('ui')", "host.html": "HOST" })
  return { alpha: make(), beta: make(), gamma: make(), home: makeTempDir(), webRoot } as const
})

type Folders = Effect.Effect.Success<typeof folders>

const host = (f: Folders) =>
  Effect.gen(function*() {
    const { hostUrl } = yield* runHost({
      settings: {
        agents: [{ name: "alpha", dir: f.alpha }, { name: "beta", dir: f.beta }, { name: "gamma", dir: f.gamma }],
        host: "127.0.0.1",
        port: 0,
        idleSeconds: 0
      },
      home: f.home,
      report: () => Effect.void,
      webRoot: f.webRoot
    })
    const port = Number(new URL(hostUrl).port)
    const token = (dir: string) => envValue(NodePath.join(dir, ".kern/.env"), "KERN_AUTH_TOKEN")!
    const states = Effect.map(call(port, "GET", "/agents", bearer(envValue(NodePath.join(f.home, ".kern-host/.env"), "KERN_HOST_TOKEN")!)), (a) =>
      Object.fromEntries((JSON.parse(a.body) as { agents: Array<{ name: string; state: string }> }).agents.map((x) => [x.name, x.state])))
    return { port, hostUrl, token, states, hostToken: envValue(NodePath.join(f.home, ".kern-host/.env"), "KERN_HOST_TOKEN")! } as const
  }).pipe(Effect.provide(env))

/** A browser session of an agent's, through its own login: a ticket for its token, exchanged at its /auth. */
const agentCookie = (port: number, name: string, token: string) =>
  Effect.gen(function*() {
    const ticket = yield* call(port, "POST", `/agents/${name}/auth/ticket`, bearer(token))
    expect(ticket.status, ticket.body).toBe(200)
    const redeemed = yield* call(port, "GET", `/agents/${name}/auth?ticket=${JSON.parse(ticket.body).ticket as string}`)
    expect(redeemed.status, redeemed.body).toBe(303)
    return cookiePair(redeemed.setCookie)
  })

describe("kern serve: agent names are not probeable", () => {
  it.live("without an agent's credentials, a live agent, a passive one and a name hosted nowhere answer alike, and nobody wakes", () =>
    Effect.gen(function*() {
      const f = yield* folders
      const alphaCookie = yield* Effect.scoped(Effect.gen(function*() {
        const h = yield* host(f)
        const [alphaToken, betaToken, gammaToken] = [h.token(f.alpha), h.token(f.beta), h.token(f.gamma)]
        // alpha and gamma live (each with a browser session), beta passive.
        const alphaCookie = yield* agentCookie(h.port, "alpha", alphaToken)
        const gammaCookie = yield* agentCookie(h.port, "gamma", gammaToken)
        expect(yield* h.states).toEqual({ alpha: "live", beta: "passive", gamma: "live" })
        const hostSession = cookiePair((yield* call(h.port, "POST", "/host/login", bearer(h.hostToken))).setCookie)

        // Credentials that are not the probed agent's own: none, a wrong token, another agent's token or cookie, forged
        // cookies, the host session's cookie (never handed to an agent), a token in the URL.
        const probes = (name: string): ReadonlyArray<readonly [string, Record<string, string>, string]> => [
          ["none", {}, ""],
          ["wrong token", bearer("nope"), ""],
          ["another agent's token", bearer(name === "gamma" ? betaToken : gammaToken), ""],
          ["another agent's cookie", { cookie: name === "alpha" ? gammaCookie : alphaCookie }, ""],
          ["forged cookie", { cookie: "kern_session=forged" }, ""],
          ["empty cookie", { cookie: "kern_session=" }, ""],
          ["host cookie as the agent's", { cookie: `kern_session=${hostSession.split("=")[1]}` }, ""],
          ["token in the URL", {}, `?token=${name === "gamma" ? betaToken : gammaToken}`],
          ["a write with another's cookie from the page", { cookie: name === "alpha" ? gammaCookie : alphaCookie, origin: h.hostUrl }, ""]
        ]
        const routes: ReadonlyArray<readonly [string, string, string | undefined]> = [
          ["GET", "/status", undefined],
          ["GET", "/health", undefined],
          ["GET", "/events", undefined],
          ["GET", "/history", undefined],
          ["GET", "/no/such/route", undefined],
          ["GET", "/media/med_0000", undefined],
          ["POST", "/message", JSON.stringify({ text: "hello" })],
          ["POST", "/auth/ticket", undefined],
          ["POST", "/sessions", undefined],
          ["DELETE", "/status", undefined],
          ["OPTIONS", "/message", undefined],
          // What a browser may load without logging in: the UI's files, the login link.
          ["GET", "/", undefined],
          ["HEAD", "/", undefined],
          ["GET", "/index.html", undefined],
          ["GET", "/assets/app.js", undefined],
          ["GET", "/assets/none.js", undefined],
          ["GET", "/assets/..%2f..%2fsecret", undefined],
          ["GET", "/auth", undefined],
          ["GET", "/auth?ticket=", undefined],
          ["GET", "/auth?ticket=forged", undefined],
          ["GET", "/auth?ticket=a&ticket=b", undefined],
          // Odd encodings through the door.
          ["GET", "/%73tatus", undefined],
          ["GET", "/status;x", undefined],
          ["GET", "/./status", undefined],
          ["GET", "//status", undefined]
        ]
        let compared = 0
        for (const [method, route, body] of routes) {
          for (const index of probes("alpha").keys()) {
            const answers = yield* Effect.forEach(["alpha", "beta", "gamma", "nosuch"], (name) => {
              const [what, headers, query] = probes(name)[index]!
              const target = `/agents/${name}${route}${route.includes("?") ? query.replace("?", "&") : query}`
              const sent = body === undefined ? headers : { ...headers, "content-type": "application/json" }
              return Effect.map(call(h.port, method, target, sent, body), (a) => ({ what, method, route, status: a.status, type: a.type, body: a.body }))
            })
            for (const answer of answers.slice(1)) expect(answer).toEqual(answers[0])
            if (!["/", "/index.html", "/assets/app.js"].includes(route) || method === "POST") {
              expect(answers[0]!.status, `${method} ${route} (${answers[0]!.what})`).toBeGreaterThanOrEqual(300)
            }
            compared++
          }
        }
        expect(compared).toBe(routes.length * probes("alpha").length)
        // The UI's files load for any name, and the page asks to log in.
        expect((yield* call(h.port, "GET", "/agents/nosuch/")).body).toContain("AGENT PAGE")
        expect((yield* call(h.port, "GET", "/agents/beta/assets/app.js")).status).toBe(200)
        // None of that woke beta.
        expect(yield* h.states).toEqual({ alpha: "live", beta: "passive", gamma: "live" })

        // The host's credentials learn that a name is not hosted; an agent's route is still not theirs.
        expect((yield* call(h.port, "GET", "/agents/nosuch/status", bearer(h.hostToken))).status).toBe(404)
        expect((yield* call(h.port, "GET", "/agents/nosuch/status", { cookie: hostSession })).status).toBe(404)
        expect((yield* call(h.port, "GET", "/agents/beta/status", bearer(h.hostToken))).status).toBe(401)
        expect((yield* call(h.port, "GET", "/agents/beta/status", { cookie: hostSession })).status).toBe(401)
        // The agents' own credentials open them, the passive one woken by its token.
        expect((yield* call(h.port, "GET", "/agents/alpha/status", { cookie: alphaCookie })).status).toBe(200)
        expect((yield* call(h.port, "GET", "/agents/beta/status", bearer(betaToken))).status).toBe(200)
        expect((yield* h.states)["beta"]).toBe("live")
        return alphaCookie
      }))

      // Restarted, every agent is passive; alpha's browser session (kept in its kern.db) is read there without waking
      // it: a forged cookie is refused and alpha stays passive, its own cookie passes and wakes it.
      yield* Effect.scoped(Effect.gen(function*() {
        const h = yield* host(f)
        expect(yield* h.states).toEqual({ alpha: "passive", beta: "passive", gamma: "passive" })
        expect((yield* call(h.port, "GET", "/agents/alpha/status", { cookie: "kern_session=forged" })).status).toBe(401)
        expect((yield* call(h.port, "GET", "/agents/alpha/auth?ticket=forged")).status).toBe(401)
        expect((yield* call(h.port, "GET", "/agents/alpha/health")).status).toBe(401)
        expect(yield* h.states).toEqual({ alpha: "passive", beta: "passive", gamma: "passive" })
        const opened = yield* call(h.port, "GET", "/agents/alpha/status", { cookie: alphaCookie })
        expect(opened.status, opened.body).toBe(200)
        expect((yield* h.states)["alpha"]).toBe("live")
      }))
    }).pipe(Effect.scoped), 120_000)
})
