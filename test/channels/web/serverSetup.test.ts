import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { HttpClient } from "@effect/platform"
import { Effect, Random, Ref } from "effect"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { blockedPortWarning, browserBlocked } from "../../../src/channels/web/blockedPorts.js"
import { exposedWarning, isLoopback, portFree, portRange, prepareServer } from "../../../src/channels/web/serverSetup.js"
import { loadConfig } from "../../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../../src/config/ProcessEnv.js"
import { makeTempDir, writeFiles } from "../../support/tempDir.js"
import { startServer } from "./harness.js"

const load = (dir: string, env: Record<string, string> = {}) =>
  loadConfig(dir).pipe(Effect.provideService(ProcessEnv, env), Effect.provide(NodeContext.layer))

const prepare = (dir: string, env: Record<string, string> = {}) =>
  Effect.flatMap(load(dir, env), prepareServer).pipe(Effect.provide(NodeContext.layer))

const agent = (config: Record<string, unknown> = {}, dotenv = "OPENROUTER_API_KEY=sk-test\n") => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", ...config }, null, 2), ".kern/.env": dotenv })
  return dir
}

describe("server setup", () => {
  it.live("the first start chooses a free port from 4100–4999 and saves it, and generates the token into .env (0600); later starts keep both", () =>
    Effect.gen(function*() {
      const dir = agent({ heartbeatInterval: 5 })
      const first = yield* prepare(dir)
      expect(first.port).toBeGreaterThanOrEqual(portRange.from)
      expect(first.port).toBeLessThanOrEqual(portRange.to)
      expect(first.host).toBe("127.0.0.1")
      expect(first.token).toMatch(/^[A-Za-z0-9_-]{40,}$/)
      const saved = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8"))
      expect(saved).toEqual({ model: "m", heartbeatInterval: 5, port: first.port })
      const dotenv = NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8")
      expect(dotenv).toContain("OPENROUTER_API_KEY=sk-test\n")
      expect(dotenv).toContain(`KERN_AUTH_TOKEN=${first.token}\n`)
      expect(NodeFs.statSync(NodePath.join(dir, ".kern/.env")).mode & 0o777).toBe(0o600)
      const second = yield* prepare(dir)
      expect(second).toEqual(first)
      expect(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8")).toBe(dotenv)
    }))

  it.live("KERN_PORT and KERN_AUTH_TOKEN from the environment are used and nothing is written", () =>
    Effect.gen(function*() {
      const dir = agent()
      const settings = yield* prepare(dir, { KERN_PORT: "4567", KERN_AUTH_TOKEN: "from-the-env-0123456789" })
      expect(settings).toMatchObject({ port: 4567, token: "from-the-env-0123456789" })
      expect(JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8"))).toEqual({ model: "m" })
      expect(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8")).not.toContain("KERN_AUTH_TOKEN")
    }))

  it.live("a port in use is not free", () =>
    Effect.gen(function*() {
      const server = NodeNet.createServer()
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve)))
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      expect(yield* portFree("127.0.0.1", port)).toBe(false)
      yield* Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      expect(yield* portFree("127.0.0.1", port)).toBe(true)
    }))

  it("loopback hosts are quiet; any other host is warned about, naming the risk", () => {
    for (const host of ["127.0.0.1", "localhost", "::1", "127.1.2.3"]) expect(isLoopback(host)).toBe(true)
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "example.com"]) expect(isLoopback(host)).toBe(false)
    expect(exposedWarning("0.0.0.0")).toContain("0.0.0.0")
    expect(exposedWarning("0.0.0.0")).toContain("run tools as the operator")
  })

  it.live("a server bound beyond loopback says so when it starts, naming the host and the risk; on loopback it says nothing", () =>
    Effect.scoped(Effect.gen(function*() {
      const said = yield* Ref.make<ReadonlyArray<string>>([])
      const report = (line: string) => Ref.update(said, (all) => [...all, line])
      const quiet = yield* startServer({ report })
      expect((yield* Effect.promise(() => fetch(`${quiet.base}/health`))).status).toBe(200)
      expect(yield* Ref.get(said)).toEqual([])
      const exposed = yield* startServer({ host: "0.0.0.0", report })
      expect((yield* Effect.promise(() => fetch(`${exposed.base}/health`))).status).toBe(200)
      expect(yield* Ref.get(said)).toEqual([`warning: ${exposedWarning("0.0.0.0")}`])
    })))

  it.live("the ports browsers refuse are exactly those node's fetch refuses, from 1 to 11,000", () =>
    Effect.gen(function*() {
      // fetch checks the port before it connects; past the check, a dispatcher that fails every request keeps any
      // byte from being sent to whatever listens on the port.
      const dispatcher = {
        dispatch: (_: unknown, handler: { onError: (error: Error) => void }) => {
          queueMicrotask(() => handler.onError(new Error("not sent")))
          return true
        }
      }
      const ports = Array.from({ length: 11_000 }, (_, i) => i + 1)
      const answers = yield* Effect.promise(() =>
        Promise.all(ports.map((port) =>
          fetch(`http://127.0.0.1:${port}/`, { dispatcher } as RequestInit).then(
            () => "sent",
            (error: { cause?: { message?: string } }) => error.cause?.message
          )
        ))
      )
      expect(new Set(answers)).toEqual(new Set(["not sent", "bad port"]))
      const refused = ports.filter((_, i) => answers[i] === "bad port")
      expect(refused).toContain(4190)
      expect(refused).toContain(10080)
      expect(ports.filter(browserBlocked)).toEqual(refused)
    }))

  it.live("a chosen port is never one browsers refuse: a random start on 4190 moves on to the next free port", () =>
    Effect.gen(function*() {
      expect(browserBlocked(4190)).toBe(true)
      const dir = agent()
      // The start drawn is 4100 + 90.
      const settings = yield* prepare(dir).pipe(Effect.withRandom(Random.fixed([90])))
      expect(settings.port).not.toBe(4190)
      expect(settings.port).toBeGreaterThan(4190)
      expect(settings.port).toBeLessThanOrEqual(portRange.to)
      expect(JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")).port).toBe(settings.port)
    }))

  it.live("a server on a port browsers refuse says so when it starts; kern's own client still reaches it, fetch does not", () =>
    Effect.scoped(Effect.gen(function*() {
      const said = yield* Ref.make<ReadonlyArray<string>>([])
      const server = yield* startServer({ port: 4190, report: (line) => Ref.update(said, (all) => [...all, line]) })
      expect(yield* Ref.get(said)).toEqual([`warning: ${blockedPortWarning(4190, `"port" in .kern/config.json`)}`])
      expect(blockedPortWarning(4190, "x")).toContain("web UI will not open")
      const fetched = yield* Effect.promise(() => fetch(`${server.base}/health`).then(() => "answered", (error: { cause?: { message?: string } }) => error.cause?.message))
      expect(fetched).toBe("bad port")
      const health = yield* HttpClient.get(`${server.base}/health`).pipe(Effect.provide(NodeHttpClient.layerUndici), Effect.scoped)
      expect(health.status).toBe(200)
    })))
})
