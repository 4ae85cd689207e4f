import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Schema } from "effect"
import { showEvent } from "../../src/channels/terminalFormat.js"
import { TurnEvent } from "../../src/turn/TurnEvent.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

// A provider that answers 429 is retried after its Retry-After: the people waiting on the turn are told what is
// retried and when, not left with 1–15 s of silence.
describe("a provider retry is a progress line", () => {
  it.live("kern chat says on stderr what failed and when it is tried again, then answers", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.error(429, { retryAfter: 1 }), FakeReply.text("back again"))
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "hello"], { cwd: dir, env }))
      expect(result.status, result.stderr).toBe(0)
      expect(result.stdout).toContain("back again")
      expect(result.stderr).toMatch(/^kern: model provider failed \(.*429.*\); retrying in 1s/m)
      // Once: the notice, not also the log's warning of it.
      expect(result.stderr.match(/retrying in/g), result.stderr).toHaveLength(1)
    })))

  it.live("--json has a retry event before the reply, with the wait; the terminal shows it as a line", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.error(503, { retryAfter: 1 }), FakeReply.text("back again"))
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "hello", "--json"], { cwd: dir, env }))
      expect(result.status, result.stderr).toBe(0)
      const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string; waitMs?: number; text?: string })
      for (const event of events) expect(Schema.decodeUnknownEither(TurnEvent)(event)._tag).toBe("Right")
      const types = events.map((event) => event.type)
      expect(types.indexOf("retry")).toBeGreaterThan(-1)
      expect(types.indexOf("retry")).toBeLessThan(types.indexOf("text-delta"))
      const retry = events.find((event) => event.type === "retry")!
      expect(retry.waitMs).toBeGreaterThan(0)
      expect(retry.text).toContain("retrying in")
      expect(retry.text).toMatch(/503/)
      const decoded = Schema.decodeUnknownSync(TurnEvent)(retry)
      expect(showEvent(decoded, DateTime.zoneUnsafeMakeNamed("UTC"))).toBe(`  (${retry.text})\n`)
    })))
})
