import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { envValue, startHost } from "../support/hostServe.js"
import { makeTempDir } from "../support/tempDir.js"
import { eventually, eventuallyEffect } from "../support/waitFor.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

interface Answer {
  readonly status: number
  readonly body: string
}

/** A request with its target sent exactly as written (no URL normalization on the way). */
const call = (port: number, method: string, target: string, token?: string, body?: unknown) =>
  Effect.async<Answer>((resume) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const request = NodeHttp.request({
      host: "127.0.0.1",
      port,
      method,
      path: target,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(data === undefined ? {} : { "content-type": "application/json" })
      }
    }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body: text })))
    })
    request.on("error", (error) => resume(Effect.succeed({ status: 0, body: error.message })))
    request.end(data)
  })

const states = (port: number, token: string) =>
  Effect.map(call(port, "GET", "/agents", token), (answer) =>
    Object.fromEntries((JSON.parse(answer.body) as { agents: Array<{ name: string; state: string }> }).agents.map((a) => [a.name, a.state])))

describe("kern serve", () => {
  it.live("two agents in one process: passive until a message wakes one, which answers from its own memory; hostile targets refused", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const alpha = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
      const beta = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
      NodeFs.appendFileSync(NodePath.join(alpha, "KNOWLEDGE.md"), "\nThe alpha marker is ALPHA-7781.\n")
      NodeFs.appendFileSync(NodePath.join(beta, "KNOWLEDGE.md"), "\nThe beta marker is BETA-4402.\n")
      const home = makeTempDir()
      const config = NodePath.join(home, "host.json")
      // idleSeconds 1: an agent with nothing to do is passivated about a second after its last request.
      NodeFs.writeFileSync(config, JSON.stringify({ agents: { alpha, beta: { dir: beta } }, port: 0, idleSeconds: 1 }))

      const host = yield* startHost(config, env)
      const { lock, port } = host
      const tokens = () => [
        envValue(NodePath.join(home, ".kern-host/.env"), "KERN_HOST_TOKEN"),
        envValue(NodePath.join(alpha, ".kern/.env"), "KERN_AUTH_TOKEN"),
        envValue(NodePath.join(beta, ".kern/.env"), "KERN_AUTH_TOKEN")
      ]
      // Each agent's token is made when it is added, as `kern start` makes it.
      expect(yield* eventually(() => tokens().every((t) => t !== undefined && t !== "")), host.stderr()).toBe(true)
      const [hostToken, alphaToken, betaToken] = tokens() as [string, string, string]

      expect(yield* states(port, hostToken)).toEqual({ alpha: "passive", beta: "passive" })
      expect(NodeFs.existsSync(NodePath.join(alpha, ".kern/agent.lock"))).toBe(false)

      // The corpus against the real server: nothing reaches another agent, no token opens another's door.
      const hostile: ReadonlyArray<[string, string | undefined, number]> = [
        ["/agents/alpha/..%2f..%2fagents/beta/status", alphaToken, 400],
        ["/agents/alpha/;/../beta/status", alphaToken, 400],
        ["/agents/alpha%2fstatus", alphaToken, 400],
        ["/agents//beta/status", betaToken, 400],
        ["/agents/A/status", alphaToken, 404],
        // A name hosted nowhere answers as a hosted one does to a token not its own (agentNames.test.ts).
        ["/agents/nobody/status", alphaToken, 401],
        ["/agents/nobody/status", hostToken, 404],
        ["/agents/beta/status", alphaToken, 401],
        ["/agents/alpha/status", hostToken, 401],
        ["/agents/alpha/status", undefined, 401],
        ["/agents", alphaToken, 401],
        ["/host", undefined, 401]
      ]
      for (const [target, token, status] of hostile) {
        const answer = yield* call(port, "GET", target, token)
        expect({ target, status: answer.status }).toEqual({ target, status })
      }
      yield* server.reply(FakeReply.text("alpha here"))
      const sent = yield* call(port, "POST", "/agents/alpha/message", alphaToken, { text: "what is your marker?" })
      expect(sent.status, sent.body).toBeLessThan(300)
      expect(yield* eventuallyEffect(Effect.map(server.modelRequests, (r) => r.length >= 1))).toBe(true)
      const firstBody = JSON.stringify((yield* server.modelRequests)[0]!.body)
      expect(firstBody).toContain("ALPHA-7781")
      expect(firstBody).not.toContain("BETA-4402")

      // Idle, alpha is passivated: its scope closed, its folder's lock released.
      const alphaLock = NodePath.join(alpha, ".kern/agent.lock")
      expect(yield* eventuallyEffect(Effect.map(states(port, hostToken), (s) => s["alpha"] === "passive")), host.stderr()).toBe(true)
      expect(NodeFs.existsSync(alphaLock)).toBe(false)

      // Beta answers from its own memory; alpha, woken again by a message, answers again.
      for (const [name, token, marker, other] of [["beta", betaToken, "BETA-4402", "ALPHA-7781"], ["alpha", alphaToken, "ALPHA-7781", "BETA-4402"]] as const) {
        const before = (yield* server.modelRequests).length
        yield* server.reply(FakeReply.text(`${name} again`))
        const again = yield* call(port, "POST", `/agents/${name}/message`, token, { text: "your marker?" })
        expect(again.status, again.body).toBeLessThan(300)
        expect(yield* eventuallyEffect(Effect.map(server.modelRequests, (r) => r.length > before)), host.stderr()).toBe(true)
        const body = JSON.stringify((yield* server.modelRequests)[before]!.body)
        expect(body).toContain(marker)
        expect(body).not.toContain(other)
      }

      // host.json is watched: beta removed is stopped (its lock released), alpha left as it is; beta added back is hosted.
      NodeFs.writeFileSync(config, JSON.stringify({ agents: { alpha }, port: 0, idleSeconds: 1 }))
      expect(yield* eventuallyEffect(Effect.map(states(port, hostToken), (s) => !("beta" in s) && "alpha" in s)), host.stderr()).toBe(true)
      expect(NodeFs.existsSync(NodePath.join(beta, ".kern/agent.lock"))).toBe(false)
      // Its handle leaves the registry just after its lock is released (until then its own token still reaches it,
      // answered 404 as it stops): once gone, its token is refused as for any name hosted nowhere.
      expect(yield* eventuallyEffect(Effect.map(call(port, "GET", "/agents/beta/status", betaToken), (r) => r.status === 401)), host.stderr()).toBe(true)
      expect((yield* call(port, "GET", "/agents/beta/status", hostToken)).status).toBe(404)
      NodeFs.writeFileSync(config, JSON.stringify({ agents: { alpha, beta: { dir: beta } }, port: 0, idleSeconds: 1 }))
      expect(yield* eventuallyEffect(Effect.map(states(port, hostToken), (s) => "beta" in s)), host.stderr()).toBe(true)
      expect((yield* call(port, "GET", "/agents/beta/status", betaToken)).status).toBe(200)

      // SIGTERM stops the host cleanly: every live agent's scope closed, every lock released.
      host.child()?.kill("SIGTERM")
      const result = yield* Fiber.join(host.exited)
      expect(result.status, result.stderr).toBe(0)
      for (const dir of [alpha, beta]) expect(NodeFs.existsSync(NodePath.join(dir, ".kern/agent.lock"))).toBe(false)
      expect(NodeFs.existsSync(lock)).toBe(false)
    })))
})
