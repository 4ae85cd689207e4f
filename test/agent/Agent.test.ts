import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Agent from "../../src/agent/Agent.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

describe("Agent (the library entry)", () => {
  it.live("Agent.layer builds a whole agent and Agent.send runs turns on one session, in order", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "read", args: { path: "IDENTITY.md", limit: 2 } }]),
        FakeReply.text("I read it."),
        FakeReply.text("Second.")
      )
      const events: Array<TurnEvent["type"]> = []
      const [first, second] = yield* Effect.all([
        Agent.send("read your identity", { onEvent: (event) => Effect.sync(() => events.push(event.type)) }),
        Agent.send("and again")
      ], { concurrency: "unbounded" }).pipe(Effect.provide(Agent.layer({ dir, env })))
      expect(first.reply).toBe("I read it.")
      expect(first.steps).toBe(2)
      expect(second.reply).toBe("Second.")
      expect(events).toContain("tool-call")
      expect(events.at(-1)).toBe("finish")
      // The second turn saw the first: one session, turns one after another.
      const requests = yield* server.requests
      expect(JSON.stringify(requests[2]?.body)).toContain("I read it.")
    })))

  it.live("a provider's 401 fails send with a typed ProviderFailed carrying its reason and status", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.error(401))
      const failure = yield* Effect.flip(Agent.send("hello").pipe(Effect.provide(Agent.layer({ dir, env }))))
      expect(failure._tag).toBe("ProviderFailed")
      if (failure._tag !== "ProviderFailed") return
      expect(failure.reason).toBe("auth")
      expect(failure.status).toBe(401)
      expect(failure.message).toContain("OPENROUTER_API_KEY")
    })))

  it.live("a folder that is not an agent's fails the layer with NotAnAgentFolder", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(
        Agent.send("hello").pipe(Effect.provide(Agent.layer({ dir: "/nonexistent/kern-agent", env })))
      )
      expect(failure._tag).toBe("NotAnAgentFolder")
    }))
})
