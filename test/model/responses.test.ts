import { LanguageModel, Prompt } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { FakeReply } from "../support/fakeModelServer.js"
import { withResponsesModel } from "./harness.js"
import { streamPhases, TestToolkit, turnWithTwoCalls, twoCallPrompt } from "./tools.js"

const prompt = twoCallPrompt

describe("Responses model (@effect/ai-openai)", () => {
  it.scoped("generateText: two tool calls, decoded params, results and usage", () =>
    withResponsesModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(turnWithTwoCalls)
        const response = yield* LanguageModel.generateText({ prompt, toolkit: TestToolkit })
        expect(response.content.map((part) => part.type)).toEqual([
          "response-metadata", "text", "tool-call", "tool-call", "finish", "tool-result", "tool-result"
        ])
        expect(response.toolCalls.map((call) => [call.id, call.name, call.params])).toEqual([
          ["call_read", "read_file", { path: "notes/today.md" }],
          ["call_add", "add", { a: 2, b: 40 }]
        ])
        expect(response.toolResults.map((r) => r.result)).toEqual(["contents of notes/today.md", 42])
        expect(response.finishReason).toBe("tool-calls")
        expect([response.usage.inputTokens, response.usage.outputTokens, response.usage.cachedInputTokens])
          .toEqual([100, 20, 60])

        const [request] = yield* server.requests
        expect(request?.path).toBe("/responses")
        expect(request?.headers["authorization"]).toBe("Bearer sk-test")
        expect(request?.body).toMatchObject({
          model: "gpt-test",
          tool_choice: "auto",
          tools: [
            { type: "function", name: "read_file", strict: false, parameters: { properties: { path: { type: "string" } } } },
            { type: "function", name: "add", strict: false }
          ]
        })
      })
    ))

  it.scoped("sends function calls and their outputs back in the next request", () =>
    withResponsesModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(turnWithTwoCalls, FakeReply.text("The note says hi; 2 + 40 = 42."))
        const first = yield* LanguageModel.generateText({ prompt, toolkit: TestToolkit })
        const second = yield* LanguageModel.generateText({
          prompt: Prompt.merge(prompt, Prompt.fromResponseParts(first.content)),
          toolkit: TestToolkit
        })
        expect(second.text).toBe("The note says hi; 2 + 40 = 42.")
        const requests = yield* server.requests
        expect(requests[1]?.body).toMatchObject({
          input: [
            { role: "system", content: "You are kern." },
            { role: "user", content: [{ type: "input_text" }] },
            { role: "assistant", content: [{ type: "output_text", text: "Let me check." }] },
            { type: "function_call", call_id: "call_read", name: "read_file", arguments: "{\"path\":\"notes/today.md\"}" },
            { type: "function_call", call_id: "call_add", name: "add", arguments: "{\"a\":2,\"b\":40}" },
            { type: "function_call_output", call_id: "call_read", output: "\"contents of notes/today.md\"" },
            { type: "function_call_output", call_id: "call_add", output: "42" }
          ]
        })
      })
    ))

  it.scoped("streamText: text deltas, argument deltas, tool calls, finish with usage", () =>
    withResponsesModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(turnWithTwoCalls)
        const parts = Chunk.toReadonlyArray(
          yield* Stream.runCollect(LanguageModel.streamText({ prompt, toolkit: TestToolkit }))
        )
        const phases = streamPhases(parts)
        const withoutResults = phases.filter((type) => type !== "tool-result")
        expect(withoutResults).toEqual([
          "response-metadata",
          "text-start", "text-delta", "text-end",
          "tool-params-start", "tool-params-delta", "tool-params-end", "tool-call",
          "tool-params-start", "tool-params-delta", "tool-params-end", "tool-call",
          "finish"
        ])
        // Each tool's result follows its call.
        const callAt = (id: string) => parts.findIndex((p) => p.type === "tool-call" && p.id === id)
        const resultAt = (id: string) => parts.findIndex((p) => p.type === "tool-result" && p.id === id)
        expect(resultAt("call_read")).toBeGreaterThan(callAt("call_read"))
        expect(resultAt("call_add")).toBeGreaterThan(callAt("call_add"))

        expect(parts.flatMap((p) => p.type === "text-delta" ? [p.delta] : []).join("")).toBe("Let me check.")
        const argDeltas = parts.flatMap((p) => p.type === "tool-params-delta" && p.id === "call_add" ? [p.delta] : [])
        expect(argDeltas.length).toBeGreaterThan(1)
        expect(argDeltas.join("")).toBe("{\"a\":2,\"b\":40}")
        expect(parts.flatMap((p) => p.type === "tool-call" ? [p.params] : [])).toEqual([
          { path: "notes/today.md" },
          { a: 2, b: 40 }
        ])
        const finish = parts.find((part) => part.type === "finish")
        expect(finish?.type === "finish" && [finish.reason, finish.usage.inputTokens, finish.usage.cachedInputTokens])
          .toEqual(["tool-calls", 100, 60])
        const [request] = yield* server.requests
        expect(request?.body).toMatchObject({ stream: true })
      })
    ))
})
