import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { envValue, startHost } from "../support/hostServe.js"
import { makeTempDir } from "../support/tempDir.js"
import { eventually, eventuallyEffect } from "../support/waitFor.js"

const env = { OPENROUTER_API_KEY: "sk-test" }
const kern = (args: ReadonlyArray<string>) => Effect.promise(() => runKern(args, { env }))

interface HostedJson {
  readonly hosted: { name: string; home: string; host: { pid: number; address: string } | null; state: string | null } | null
  readonly runtime: { command: string } | null
  readonly problems: ReadonlyArray<string>
}

const statusOf = (dir: string) =>
  Effect.map(kern(["status", dir, "--json"]), (result) => ({ result, json: JSON.parse(result.stdout) as HostedJson }))

const hostStatus = (home: string) =>
  Effect.map(kern(["status", "--host", home, "--json"]), (result) => ({
    result,
    json: JSON.parse(result.stdout) as { running: boolean; address?: string; host?: { pid: number }; agents?: Array<{ name: string; state: string }> }
  }))

describe("clients of kern serve", () => {
  it.live("status, logs and chat reach a hosted agent by its folder: status never wakes it, chat wakes it once through the host", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const alpha = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false, prices: { "test-model": { input: 0, output: 0 } } })
      const beta = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false, prices: { "test-model": { input: 0, output: 0 } } })
      const home = makeTempDir()
      const config = NodePath.join(home, "host.json")
      // idleSeconds 0: an agent woken stays live, so the test sees it live when it looks.
      NodeFs.writeFileSync(config, JSON.stringify({ agents: { alpha, beta: { dir: beta } }, port: 0, idleSeconds: 0 }))
      const host = yield* startHost(config, env)
      const hostPid = host.child()?.pid
      expect(yield* eventually(() => envValue(NodePath.join(beta, ".kern/.env"), "KERN_AUTH_TOKEN") !== undefined), host.stderr()).toBe(true)
      expect(yield* eventually(() => NodeFs.existsSync(NodePath.join(alpha, ".kern/hosted.json"))), host.stderr()).toBe(true)

      // A passive agent: hosted, by which host, passive; not woken by being asked (no lock, no model request).
      const passive = yield* statusOf(alpha)
      expect(passive.json.problems).toEqual([])
      expect(passive.result.status, passive.result.stderr).toBe(0)
      expect(passive.json.hosted).toMatchObject({ name: "alpha", home, host: { pid: hostPid, address: host.origin }, state: "passive" })
      expect(passive.json.runtime).toBeNull()
      const text = yield* kern(["status", alpha])
      expect(text.stdout).toMatch(new RegExp(`hosted: +as alpha by kern serve pid ${hostPid} at ${host.origin}/agents/alpha/ .*: passive`))
      expect(NodeFs.existsSync(NodePath.join(alpha, ".kern/agent.lock"))).toBe(false)

      // The host: its address, pid and every agent's state.
      const before = yield* hostStatus(home)
      expect(before.result.status, before.result.stderr).toBe(0)
      expect(before.json).toMatchObject({ running: true, address: host.origin, host: { pid: hostPid } })
      expect(Object.fromEntries(before.json.agents!.map((a) => [a.name, a.state]))).toEqual({ alpha: "passive", beta: "passive" })
      expect((yield* kern(["status", "--host", config])).stdout).toContain(`address:   ${host.origin}`)

      // Chat to the passive agent: found through the host's lock and its name, woken through the host, answered once.
      // No turn runs in the chat's own process (it would take the folder's lock from the host: the wake would fail).
      yield* server.reply(FakeReply.text("alpha answers ONCE-5521"))
      const chat = yield* kern(["chat", alpha, "-m", "hello there"])
      expect(chat.status, `${chat.stderr}\n${host.stderr()}`).toBe(0)
      expect(chat.stdout).toContain("ONCE-5521")
      expect((yield* server.modelRequests).length).toBe(1)
      const lock = JSON.parse(NodeFs.readFileSync(NodePath.join(alpha, ".kern/agent.lock"), "utf8")) as { pid: number; command: string }
      expect(lock).toMatchObject({ pid: hostPid, command: "kern serve" })

      // Live now: status says so, with the host's word and the runtime (the host) holding the folder.
      const live = yield* statusOf(alpha)
      expect(live.json.hosted?.state).toBe("live")
      expect(live.json.runtime?.command).toBe("kern serve")
      const after = yield* hostStatus(home)
      expect(Object.fromEntries(after.json.agents!.map((a) => [a.name, a.state]))).toEqual({ alpha: "live", beta: "passive" })

      // Logs: alpha's lines of the host's log, and none of beta's; beta (never woken) has its own lines only.
      yield* server.reply(FakeReply.text("beta answers"))
      expect((yield* kern(["chat", beta, "-m", "hi beta"])).status).toBe(0)
      const alphaLog = yield* eventuallyEffect(Effect.map(kern(["logs", alpha, "--json", "-n", "500"]), (r) => r.stdout.includes("alpha: waking")))
      expect(alphaLog, host.stderr()).toBe(true)
      const lines = (yield* kern(["logs", alpha, "--json", "-n", "500"])).stdout.trim().split("\n").map((l) => JSON.parse(l) as { annotations: { agent?: string }; message: string })
      expect(lines.length).toBeGreaterThan(1)
      expect(lines.every((l) => l.annotations.agent === "alpha")).toBe(true)
      // A turn's lines (logged by the agent's own fibers, forked while it woke) carry its name too.
      expect(lines.some((l) => "turn" in l.annotations)).toBe(true)
      const hostLog = (yield* kern(["logs", "--host", home, "--json", "-n", "1000"])).stdout.trim().split("\n").map((l) => JSON.parse(l) as { annotations: { agent?: string } })
      expect(new Set(hostLog.map((l) => l.annotations.agent))).toEqual(new Set([undefined, "alpha", "beta"]))
      // The host's token never reaches its log.
      const hostToken = envValue(NodePath.join(home, ".kern-host/.env"), "KERN_HOST_TOKEN")!
      expect(NodeFs.readFileSync(NodePath.join(home, ".kern-host/logs/kern.log"), "utf8")).not.toContain(hostToken)

      // kern stop leaves a hosted agent to its host, and says so; the agent is still live.
      const stop = yield* kern(["stop", alpha])
      expect(stop.status).toBe(1)
      expect(stop.stderr).toContain("hosted by kern serve")
      expect((yield* statusOf(alpha)).json.hosted?.state).toBe("live")
    })))
})
