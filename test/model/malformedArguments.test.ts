import { LanguageModel, type Toolkit } from "@effect/ai"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Ref } from "effect"
import * as NodePath from "node:path"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { showEvent } from "../../src/channels/terminalFormat.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { toolkitFor } from "../../src/kernel/aiTools.js"
import { rawArgumentsKey } from "../../src/kernel/toolArgs.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { kernelLayer } from "../kernel/harness.js"
import { ReadArgs, readTool } from "../../src/tools/read.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { withChatModel, withResponsesModel } from "./harness.js"

/** Runs one turn of the whole agent runtime against the fake model server, speaking `provider`'s API. */
const turnWith = (provider: "openai" | "openrouter", script: (server: FakeModelServerShape) => Effect.Effect<void>) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* makeFakeServer
    const dir = NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, {
      ".kern/config.json": JSON.stringify({ model: "test-model", provider, baseURL: server.baseURL }),
      "notes.md": "a note\n"
    })
    yield* script(server)
    const runtime = agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test", OPENAI_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    )
    const result = yield* Effect.scoped(Effect.gen(function*() {
      const queue = yield* MessageQueue
      const runner = yield* TurnRunner
      const { session } = yield* openActiveSession()
      yield* queue.offer({ interface: "web", channel: "web:1", userId: "u1", text: "read my note" })
      const message = yield* queue.next
      const events = yield* Ref.make<ReadonlyArray<TurnEvent>>([])
      const outcome = yield* runner.run({ message, session, emit: (event) => Ref.update(events, (all) => [...all, event]) })
      return { outcome, events: yield* Ref.get(events), messages: yield* session.history.messages }
    })).pipe(Effect.provide(runtime))
    return { ...result, requests: yield* server.requests }
  }))

/** What a model sent as the arguments of `read`, and a word the error must use. */
const malformed: ReadonlyArray<readonly [string, string, string]> = [
  ["unterminated", "{\"path\": \"notes.md\"", "not valid JSON"],
  ["empty", "", "path: missing"],
  ["an array", "[\"notes.md\"]", "an array, not an object"],
  ["a JSON string", "\"notes.md\"", "a string, not an object"],
  ["a number", "42", "a number, not an object"],
  ["a wrong type", "{\"path\": 42}", "path: expected string"]
]

for (const provider of ["openai", "openrouter"] as const) {
  const api = provider === "openai" ? "Responses API" : "Chat Completions"
  describe(`malformed tool-call arguments over the ${api}`, () => {
    it.live("become VALIDATION_ERROR results the model reads in its next step; the turn goes on", () =>
      Effect.gen(function*() {
        const { events, messages, outcome, requests } = yield* turnWith(provider, (server) =>
          server.reply(
            FakeReply.toolCalls(malformed.map(([, args], i) => ({ id: `call_${i}`, name: "read", args }))),
            FakeReply.toolCalls([{ id: "call_ok", name: "read", args: { path: "notes.md" } }]),
            FakeReply.text("Your note says: a note.")
          ))
        expect(outcome.failure).toBeUndefined()
        expect(outcome.reply).toBe("Your note says: a note.")
        const results = messages.flatMap((m) => (m._tag === "tool" ? [String(m.result)] : []))
        expect(results).toHaveLength(malformed.length + 1)
        malformed.forEach(([what, , word], i) => {
          const result = results[i] ?? ""
          expect(result, what).toMatch(/^VALIDATION_ERROR: invalid arguments for read: /)
          expect(result, what).toContain(word)
          // One or two lines, naming the field or the expected shape; never the Schema's tree.
          expect(result.split("\n").length, what).toBeLessThanOrEqual(2)
          expect(result, what).toContain("path")
          expect(result, what).not.toContain("└─")
        })
        // The model recovered: its well-formed call ran.
        expect(results.at(-1)).toContain("a note")
        // The model's next step saw every error.
        expect(requests).toHaveLength(3)
        const next = JSON.stringify(requests[1]!.body)
        expect(next.match(/VALIDATION_ERROR/g)?.length).toBe(malformed.length)
        // The terminal shows the arguments as the model sent them.
        const lines = events.filter((e) => e.type === "tool-call").map((e) => showEvent(e, DateTime.zoneUnsafeMakeNamed("UTC")))
        expect(lines[0]).toContain("read {\"path\": \"notes.md\"")
        expect(lines[2]).toContain("read [\"notes.md\"]")
        expect(lines[3]).toContain("read \"notes.md\"")
      }))
  })
}

/** The registered `read` as the turn offers it to @effect/ai (calls are resolved by the executor, not here). */
const readToolkit = Effect.gen(function*() {
  const registry = yield* ToolRegistry
  const tool = yield* registry.register({ toolId: readTool.toolId, name: readTool.name }, {
    parameters: ReadArgs,
    handler: () => Effect.void
  })
  const { toolkit } = toolkitFor([tool])
  const withHandler: Toolkit.WithHandler<any> = { tools: toolkit.tools, handle: () => Effect.die("not resolved here") }
  return withHandler
}).pipe(Effect.provide(kernelLayer()))

for (const [api, withModel] of [["Responses API", withResponsesModel], ["Chat Completions", withChatModel]] as const) {
  describe(`a whole (non-streamed) ${api} answer with malformed tool-call arguments`, () => {
    it.scoped("decodes, the arguments kept as the model sent them", () =>
      withModel((server) =>
        Effect.gen(function*() {
          yield* server.reply(FakeReply.toolCalls([
            { id: "c1", name: "read", args: "{\"path\": \"x\"" },
            { id: "c2", name: "read", args: "[1]" },
            { id: "c3", name: "read", args: { path: "x" } }
          ]))
          const response = yield* LanguageModel.generateText({
            prompt: "read x",
            toolkit: yield* readToolkit,
            disableToolCallResolution: true
          })
          expect(response.toolCalls.map((call) => [call.id, call.params])).toEqual([
            ["c1", { [rawArgumentsKey]: "{\"path\": \"x\"" }],
            ["c2", { [rawArgumentsKey]: "[1]" }],
            ["c3", { path: "x" }]
          ])
        })
      ))
  })
}
