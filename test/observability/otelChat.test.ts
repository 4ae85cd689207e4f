import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { fakeOtlp } from "../support/fakeOtlp.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

// `kern chat` (the built binary, one turn in its own process) exports the turn's spans when the standard variables
// name a collector, loading the exporter chunk lazily, and sends what is left before it exits.

describe("kern chat with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it.live("the turn's spans reach the collector before the process exits; the reply is unchanged", () =>
    Effect.scoped(Effect.gen(function*() {
      const collector = yield* fakeOtlp
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(
        FakeReply.toolCalls([{ id: "call_r", name: "read", args: { path: "IDENTITY.md", limit: 3 } }]),
        FakeReply.text("Read it.")
      )
      const result = yield* Effect.promise(() =>
        runKern(["chat", "-m", "read your identity"], {
          cwd: dir,
          env: { OPENROUTER_API_KEY: "sk-test", OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin, OTEL_SERVICE_NAME: "kern-chat" }
        }))
      expect(result.status, result.stderr).toBe(0)
      expect(result.stdout).toContain("Read it.")
      expect(collector.problems).toEqual([])
      const turn = collector.spans.find((span) => span.name === "kern.agent.turn")
      expect(turn?.resource).toMatchObject({ "service.name": "kern-chat" })
      expect(turn?.attributes).toMatchObject({ "kern.interface": "cli", "kern.turn.steps": 2, "kern.turn.outcome": "ok" })
      const call = collector.spans.find((span) => span.name === "kern.tool.call")
      expect(call?.attributes).toMatchObject({ "kern.tool.id": "read", "kern.tool.safety_class": "READ_ONLY", "kern.tool.decision": "allowed" })
      expect(call?.traceId).toBe(turn?.traceId)
    })), 120_000)
})
