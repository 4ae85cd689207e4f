import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const files = {
  "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n",
  "notes/first.md": "FIRST-RESULT-alpha\n",
  "notes/second.md": "SECOND-RESULT-beta\n"
}

/** One turn on the newest session, opened from its file as every `kern chat` does. */
const turn = (text: string) =>
  Effect.scoped(Effect.gen(function*() {
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const { session } = yield* openActiveSession()
    yield* queue.offer({ interface: "cli", channel: "terminal", userId: "operator", text })
    const outcome = yield* runner.run({ message: yield* queue.next, session, emit: () => Effect.void })
    yield* queue.endTurn("main")
    return outcome
  }))

/** The tool calls and results of a request body, in order, as [kind, id, detail]. */
const chatToolTrail = (body: unknown) =>
  (body as { messages: Array<{ role: string; content: unknown; tool_calls?: Array<{ id: string; function: { arguments: string } }>; tool_call_id?: string }> })
    .messages.flatMap((m) =>
      m.role === "assistant" && m.tool_calls !== undefined
        ? m.tool_calls.map((call) => ["call", call.id, call.function.arguments])
        : m.role === "tool"
        ? [["result", m.tool_call_id, String(m.content)]]
        : []
    )

const responsesToolTrail = (body: unknown) =>
  (body as { input: Array<{ type?: string; call_id?: string; arguments?: string; output?: unknown }> }).input.flatMap((item) =>
    item.type === "function_call"
      ? [["call", item.call_id, String(item.arguments)]]
      : item.type === "function_call_output"
      ? [["result", item.call_id, String(item.output)]]
      : []
  )

const reusedIds = (config: (server: FakeModelServerShape) => Record<string, unknown>, trail: (body: unknown) => Array<Array<unknown>>) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* makeFakeServer
    const dir = NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "test-model", ...config(server) }), ...files })
    const runtime = agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test", OPENAI_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    )
    // The provider restarts its ids at call_1 every step and every turn.
    yield* server.reply(
      FakeReply.toolCalls([{ id: "call_1", name: "read", args: { path: "notes/first.md" } }]),
      FakeReply.toolCalls([{ id: "call_1", name: "read", args: { path: "notes/second.md" } }]),
      FakeReply.text("Read both."),
      FakeReply.toolCalls([{ id: "call_1", name: "read", args: { path: "IDENTITY.md" } }]),
      FakeReply.text("And that one.")
    )
    yield* Effect.gen(function*() {
      expect((yield* turn("read first, then second")).failure).toBeUndefined()
      expect((yield* turn("now the identity")).failure).toBeUndefined()
    }).pipe(Effect.provide(runtime))
    const requests = yield* server.requests
    expect(requests).toHaveLength(5)
    // The last request comes from a session read back from its file: each result still follows its own call.
    const steps = trail(requests[4]!.body)
    expect(steps.map(([kind, id]) => `${kind}:${id}`)).toEqual([
      "call:call_1", "result:call_1", "call:call_1", "result:call_1", "call:call_1", "result:call_1"
    ])
    expect(String(steps[0]![2])).toContain("first.md")
    expect(String(steps[1]![2])).toContain("FIRST-RESULT-alpha")
    expect(String(steps[2]![2])).toContain("second.md")
    expect(String(steps[3]![2])).toContain("SECOND-RESULT-beta")
    expect(String(steps[5]![2])).toContain("I am the test agent.")
  }))

describe("tool results and reused call ids", () => {
  it.live("Chat Completions: a provider that restarts ids at call_1 gets each result under its own call", () =>
    reusedIds((server) => ({ baseURL: server.baseURL }), chatToolTrail))

  it.live("Responses API: the same, as function_call / function_call_output pairs", () =>
    reusedIds((server) => ({ provider: "openai", baseURL: server.baseURL }), responsesToolTrail))
})
