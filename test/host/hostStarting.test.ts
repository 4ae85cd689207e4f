import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { runHost } from "../../src/host/Host.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { make as makeFakeServer } from "../support/fakeModelServer.js"
import { envValue } from "../support/hostServe.js"
import { makeTempDir } from "../support/tempDir.js"
import { conditionBound } from "../support/waitFor.js"

// kern serve records its address in its lock, and writes each agent's token, as soon as it listens: clients take that
// as the sign to call it. A request that arrives then, before the host has made its app (the registry, the wake
// sources), waits for it and is answered. It used to be accepted with no handler and never answered: a client that
// read the address early (the browser test, a bench's first message) hung for good.

/** The event loop's turns to come: the host, in this process, has read and parsed what the kernel delivered it by then. */
const turns = async (count: number) => {
  for (let i = 0; i < count; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/**
 * `request` written whole on a socket to `url`: `delivered` once it is written and the host has had its turns to read
 * and parse it; `answer` is all it said back until it closed, or "" if it said nothing for conditionBound.
 */
const sendRaw = (url: URL, request: string) => {
  const socket = NodeNet.connect(Number(url.port), url.hostname)
  let received = ""
  socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")))
  const answer = new Promise<string>((resolve) => {
    const timer = setTimeout(() => socket.destroy(), conditionBound)
    socket.on("close", () => {
      clearTimeout(timer)
      resolve(received)
    })
  })
  const delivered = new Promise<void>((resolve, reject) => {
    socket.once("error", reject)
    socket.once("connect", () => socket.write(request, () => resolve(turns(20))))
  })
  return { delivered, answer }
}

describe("kern serve while it starts", () => {
  it.live("a request sent as soon as the lock records the address is answered once the host is ready", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeServer
      const alpha = initAgentWithModel(model.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
      // A folder that is no agent: the host reports it while it adds its agents, after it listens and records its
      // address and before its app exists. That report is the moment a hasty client calls.
      const notAnAgent = makeTempDir()
      const home = makeTempDir()
      const early: Array<Promise<string>> = []
      const report = (line: string) =>
        line.includes("not an agent folder") ? Effect.promise(() => {
          const { address } = JSON.parse(NodeFs.readFileSync(NodePath.join(home, ".kern-host/host.lock"), "utf8")) as { address: string }
          const token = envValue(NodePath.join(alpha, ".kern/.env"), "KERN_AUTH_TOKEN")
          const sent = sendRaw(new URL(address), `GET /agents/alpha/status HTTP/1.1\r\nhost: ${new URL(address).host}\r\nauthorization: Bearer ${token}\r\nconnection: close\r\n\r\n`)
          early.push(sent.answer)
          return sent.delivered
        }) : Effect.void
      yield* runHost({
        settings: { agents: [{ name: "alpha", dir: alpha }, { name: "stray", dir: notAnAgent }], host: "127.0.0.1", port: 0, idleSeconds: 0 },
        home,
        report
      })
      expect(early.length).toBe(1)
      // Unanswered before the fix: the socket stayed open with nothing said until conditionBound, and the test failed.
      const answer = yield* Effect.promise(() => early[0]!)
      expect(answer.split("\r\n")[0], answer).toBe("HTTP/1.1 200 OK")
      expect(answer).toContain('"model"')
    }).pipe(Effect.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" }))))), 120_000)
})
