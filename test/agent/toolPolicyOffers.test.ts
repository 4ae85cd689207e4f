import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Agent from "../../src/agent/Agent.js"
import { loadConfig } from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AgentCapabilities } from "../../src/kernel/contracts.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import * as Database from "../../src/storage/Database.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { offeredTools, toolResultsById } from "../support/modelRequests.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

/** The folder's audit log, read after the agent let it go. */
const auditOf = (dir: string) =>
  Effect.flatMap(EventLog.EventLog, (log) => log.recent(100)).pipe(
    Effect.provide(EventLog.layerSql.pipe(Layer.provide(KnownSecrets.layerNone)).pipe(Layer.provideMerge(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })))),
    Effect.orDie
  )

/** One turn in which the model calls `calls` at once, then answers; the first request's offer and the results. */
const turnCalling = (config: Record<string, unknown>, calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: unknown }>, files: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const server = yield* makeFakeServer
    const dir = initAgentWithModel(server.baseURL, { recall: false, ...config })
    for (const [file, text] of Object.entries(files)) NodeFs.writeFileSync(NodePath.join(dir, file), text)
    yield* server.reply(FakeReply.toolCalls(calls), FakeReply.text("done"))
    yield* Agent.send("go").pipe(Effect.provide(Agent.layer({ dir, env })))
    const requests = (yield* server.requests).filter((request) => request.path !== "/embeddings")
    return { dir, offered: offeredTools(requests[0]!.body), results: toolResultsById(requests[1]!.body) }
  })

const writeCalls = [
  { id: "w1", name: "bash", args: { command: "touch pwned" } },
  { id: "w2", name: "write", args: { path: "pwned.md", content: "x" } },
  { id: "w3", name: "webfetch", args: { url: "https://example.com" } },
  { id: "w4", name: "read", args: { path: "KERN.md", limit: 1 } }
]

describe("what the policy forbids is neither offered nor run", () => {
  for (const safetyMode of ["SAFE", "STRICT"] as const) {
    it.live(`safetyMode ${safetyMode} offers the model read-only tools only; a call to another is refused, not run`, () =>
      Effect.scoped(Effect.gen(function*() {
        const { dir, offered, results } = yield* turnCalling({ safetyMode }, writeCalls)
        expect(offered).toContain("read")
        expect(offered).toContain("grep")
        for (const name of ["bash", "write", "edit", "webfetch", "message", "kern_pair"]) expect(offered).not.toContain(name)
        for (const id of ["w1", "w2", "w3"]) {
          expect(results[id]).toContain("PERMISSION_DENIED")
          expect(results[id]).toContain(`${safetyMode} mode allows read-only tools only`)
        }
        expect(results.w4).not.toContain("PERMISSION_DENIED")
        expect(NodeFs.existsSync(NodePath.join(dir, "pwned"))).toBe(false)
        expect(NodeFs.existsSync(NodePath.join(dir, "pwned.md"))).toBe(false)
      })))
  }

  it.live("STRICT redacts what looks like a credential in a tool's result; NORMAL and SAFE show it", () =>
    Effect.scoped(Effect.gen(function*() {
      const files = { "deploy.env": "HOST=db.internal\nDB_PASSWORD=hunter2hunter2\nGITHUB=ghp_0123456789abcdefghijABCDEFGHIJ012345\n" }
      const call = [{ id: "r1", name: "read", args: { path: "deploy.env" } }]
      const strict = yield* turnCalling({ safetyMode: "STRICT" }, call, files)
      expect(strict.results.r1).toContain("HOST=db.internal")
      expect(strict.results.r1).not.toContain("hunter2hunter2")
      expect(strict.results.r1).not.toContain("ghp_0123456789")
      expect(strict.results.r1).toContain("[redacted:credential]")
      const safe = yield* turnCalling({ safetyMode: "SAFE" }, call, files)
      expect(safe.results.r1).toContain("hunter2hunter2")
    })))

  it.live("tools.block turns off webfetch alone: not offered, refused and audited when called anyway", () =>
    Effect.scoped(Effect.gen(function*() {
      const { dir, offered, results } = yield* turnCalling(
        { tools: { block: ["webfetch"] } },
        [{ id: "f1", name: "webfetch", args: { url: "https://example.com" } }]
      )
      expect(offered).not.toContain("webfetch")
      for (const name of ["read", "write", "bash", "grep"]) expect(offered).toContain(name)
      expect(results.f1).toContain("PERMISSION_DENIED")
      expect(results.f1).toContain("webfetch is blocked by policy")
      const refused = (yield* auditOf(dir)).filter((event) => event.decisionKey === "kernel.tool.policy.blocked")
      expect(refused.map((event) => event.toolId)).toEqual(["webfetch"])
    })))

  it.live("tools.allow with a pattern offers only what it matches", () =>
    Effect.scoped(Effect.gen(function*() {
      const { offered, results } = yield* turnCalling(
        { tools: { allow: ["read", "g*"] } },
        [{ id: "b1", name: "bash", args: { command: "true" } }]
      )
      expect([...offered].sort()).toEqual(["glob", "grep", "read"])
      expect(results.b1).toContain("bash is not in the policy's allowed tools")
    })))
})

/** One turn of an embedded agent declaring `caps`, in which the model calls `calls`; the first request's offer and the results. */
const declaredTurn = (
  caps: unknown,
  config: Record<string, unknown>,
  calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: unknown }>
) =>
  Effect.gen(function*() {
    const server = yield* makeFakeServer
    const dir = initAgentWithModel(server.baseURL, { recall: false, ...config })
    const capabilities = Schema.decodeUnknownSync(AgentCapabilities)(caps)
    yield* server.reply(FakeReply.toolCalls(calls), FakeReply.text("done"))
    yield* Agent.send("go").pipe(Effect.provide(Agent.layer({ dir, env, capabilities })))
    const requests = (yield* server.requests).filter((request) => request.path !== "/embeddings")
    return { dir, offered: [...offeredTools(requests[0]!.body)].sort(), results: toolResultsById(requests[1]!.body) }
  })

describe("an embedded agent declared with AgentCapabilities (Agent.layer's capabilities)", () => {
  it.live("with a tool allow list gets only those tools; a call of another is refused and audited", () =>
    Effect.scoped(Effect.gen(function*() {
      const { dir, offered, results } = yield* declaredTurn(
        { agentName: "reader", toolAllowlist: ["read", "gl*"] },
        {},
        [{ id: "g1", name: "grep", args: { pattern: "x" } }, { id: "b1", name: "bash", args: { command: "touch pwned" } }]
      )
      expect(offered).toEqual(["glob", "read"])
      expect(results.g1).toContain("PERMISSION_DENIED")
      expect(results.g1).toContain(`grep is not in the tool allow list agent "reader" declares`)
      expect(results.b1).toContain("PERMISSION_DENIED")
      expect(NodeFs.existsSync(NodePath.join(dir, "pwned"))).toBe(false)
      const refused = (yield* auditOf(dir)).filter((event) => event.decisionKey === "kernel.tool.policy.blocked")
      expect(refused.map((event) => event.toolId).sort()).toEqual(["bash", "grep"])
    })))

  it.live("a READ_ONLY ceiling (the default) offers read-only tools only, in a NORMAL config", () =>
    Effect.scoped(Effect.gen(function*() {
      const { dir, offered, results } = yield* declaredTurn({ agentName: "reader" }, {}, writeCalls)
      for (const name of ["read", "grep", "glob"]) expect(offered).toContain(name)
      for (const name of ["bash", "write", "edit", "webfetch", "message"]) expect(offered).not.toContain(name)
      expect(results.w1).toContain(`bash is DESTRUCTIVE, above the READ_ONLY ceiling agent "reader" declares`)
      expect(results.w2).toContain("PERMISSION_DENIED")
      expect(results.w3).toContain("PERMISSION_DENIED")
      expect(results.w4).not.toContain("PERMISSION_DENIED")
      expect(NodeFs.existsSync(NodePath.join(dir, "pwned.md"))).toBe(false)
    })))

  it.live("the narrower wins: the config's tools.block and the declaration's list both apply", () =>
    Effect.scoped(Effect.gen(function*() {
      const { offered, results } = yield* declaredTurn(
        { agentName: "writer", toolAllowlist: ["read", "write", "grep"], safetyClassCeiling: "LOCAL_WRITE" },
        { tools: { allow: ["read", "write", "glob"], block: ["write"] } },
        [{ id: "w1", name: "write", args: { path: "x.md", content: "x" } }]
      )
      expect(offered).toEqual(["read"])
      expect(results.w1).toContain("write is blocked by policy")
    })))
})
