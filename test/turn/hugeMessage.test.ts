import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AssistantMessage, SessionHeader, UserMessage } from "../../src/session/messages.js"
import { lineOf } from "../../src/session/SessionStore.js"
import { FakeReply, makeWith as makeFakeServerWith } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { meanFreshDatabase } from "../support/sessionFixture.js"

/** 8 MB of lower-case letters without a space: one pre-token, the tokenizer's worst case. */
const whitespaceFree = (chars: number): string => {
  const letters = "abcdefghijklmnopqrstuvwxyz"
  const out: Array<string> = []
  let state = 7
  for (let i = 0; i < chars; i++) {
    state = (state * 1103515245 + 12345) % 2147483648
    out.push(letters[state % 26]!)
  }
  return out.join("")
}

describe("a session holding an 8 MB reply without whitespace", () => {
  // Counting its tokens was quadratic: 26 minutes before the agent could answer, and again at every start. The test
  // waits for the turn to finish (bounded by the test's timeout), it does not time it.
  it.live("loads, and a turn on it completes", () =>
    Effect.scoped(Effect.gen(function*() {
      // The reply far overflows the context, so the summarizer asks the model too: every ask is answered the same.
      const server = yield* makeFakeServerWith({ fallback: FakeReply.text("Still here.") })
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, {
        ".kern/config.json": JSON.stringify({ model: "test-model", provider: "openrouter", baseURL: server.baseURL, autoCommit: false })
      })
      const huge = whitespaceFree(8_000_000)
      const id = "20261122-100000-000-beef"
      const at = "2026-11-22T10:00:00.000Z"
      NodeFs.mkdirSync(NodePath.join(dir, ".kern", "sessions"), { recursive: true })
      meanFreshDatabase(dir)
      NodeFs.writeFileSync(
        NodePath.join(dir, ".kern", "sessions", `${id}.jsonl`),
        [
          new SessionHeader({ version: 1, id, createdAt: at, agent: "agent" }),
          new UserMessage({ text: "paste the blob", at }),
          new AssistantMessage({ text: huge, at })
        ].map(lineOf).join("")
      )
      const runtime = agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
        Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
        Layer.provide(NodeContext.layer)
      )
      const { outcome, messages } = yield* Effect.scoped(Effect.gen(function*() {
        const queue = yield* MessageQueue
        const runner = yield* TurnRunner
        const { session } = yield* openActiveSession()
        yield* queue.offer({ interface: "web", channel: "web:1", userId: "u1", text: "are you there?" })
        const message = yield* queue.next
        const outcome = yield* runner.run({ message, session, emit: () => Effect.void })
        return { outcome, messages: yield* session.history.messages }
      })).pipe(Effect.provide(runtime))
      expect(outcome.failure).toBeUndefined()
      expect(outcome.reply).toBe("Still here.")
      // The same session went on: its file holds the reply and then this turn.
      const file = NodeFs.readFileSync(NodePath.join(dir, ".kern", "sessions", `${id}.jsonl`), "utf8")
      expect(file.indexOf(huge)).toBeGreaterThan(0)
      expect(file.indexOf("are you there?")).toBeGreaterThan(file.indexOf(huge))
      expect(messages.at(-1)).toMatchObject({ _tag: "assistant", text: "Still here." })
      expect((yield* server.requests).length).toBeGreaterThan(0)
    })), 600_000)
})
