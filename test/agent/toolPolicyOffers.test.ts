import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
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
    Effect.provide(EventLog.layerSql.pipe(Layer.provideMerge(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })))),
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

describe("an embedded agent declared with a tool allow list", () => {
  it.live("gets only those tools through the config it is built from (Agent.layerFromConfig)", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { recall: false })
      const caps = Schema.decodeUnknownSync(AgentCapabilities)({ agentName: "reader", toolAllowlist: ["read", "glob"] })
      const loaded = yield* loadConfig(dir).pipe(Effect.provideService(ProcessEnv, env), Effect.provide(NodeContext.layer))
      const declared = {
        ...loaded,
        config: { ...loaded.config, tools: { allow: caps.toolAllowlist, block: [] }, safetyMode: "SAFE" as const }
      }
      yield* server.reply(FakeReply.toolCalls([{ id: "g1", name: "grep", args: { pattern: "x" } }]), FakeReply.text("done"))
      yield* Agent.send("go").pipe(Effect.provide(Agent.layerFromConfig(declared, { env })))
      const requests = (yield* server.requests).filter((request) => request.path !== "/embeddings")
      expect([...offeredTools(requests[0]!.body)].sort()).toEqual(["glob", "read"])
      expect(toolResultsById(requests[1]!.body).g1).toContain("grep is not in the policy's allowed tools")
    })))
})
