import { LanguageModel, Prompt } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { FakeReply } from "../support/fakeModelServer.js"
import { withChatModel } from "./harness.js"
import { streamPhases, TestToolkit, turnWithTwoCalls, twoCallPrompt } from "./tools.js"

const prompt = twoCallPrompt

describe("Chat Completions model", () => {
  it.scoped("generateText: two tool calls, decoded params, results and usage", () =>
    withChatModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(turnWithTwoCalls)
        const response = yield* LanguageModel.generateText({ prompt, toolkit: TestToolkit })
        expect(response.content.map((part) => part.type)).toEqual([
          "response-metadata", "text", "tool-call", "tool-call", "finish", "tool-result", "tool-result"
        ])
        expect(response.text).toBe("Let me check.")
        expect(response.toolCalls.map((call) => [call.id, call.name, call.params])).toEqual([
          ["call_read", "read_file", { path: "notes/today.md" }],
          ["call_add", "add", { a: 2, b: 40 }]
        ])
        expect(response.toolResults.map((r) => r.result)).toEqual(["contents of notes/today.md", 42])
        expect(response.finishReason).toBe("tool-calls")
        expect(response.usage.inputTokens).toBe(100)
        expect(response.usage.outputTokens).toBe(20)
        expect(response.usage.cachedInputTokens).toBe(60)

        const [request] = yield* server.requests
        expect(request?.path).toBe("/chat/completions")
        expect(request?.headers["authorization"]).toBe("Bearer sk-test")
        expect(request?.body).toMatchObject({
          model: "test-model",
          messages: [
            { role: "system", content: "You are kern." },
            { role: "user", content: "What is in today's note, and what is 2 + 40?" }
          ],
          tool_choice: "auto",
          tools: [
            {
              type: "function",
              function: {
                name: "read_file",
                description: "Read a text file from the agent folder",
                parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
              }
            },
            { type: "function", function: { name: "add" } }
          ]
        })
        expect(request?.body).not.toHaveProperty("stream")
      })
    ))

  it.scoped("sends tool calls and tool results back in the next request", () =>
    withChatModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(turnWithTwoCalls, FakeReply.text("The note says hi; 2 + 40 = 42."))
        const first = yield* LanguageModel.generateText({ prompt, toolkit: TestToolkit })
        const next = Prompt.merge(prompt, Prompt.fromResponseParts(first.content))
        const second = yield* LanguageModel.generateText({ prompt: next, toolkit: TestToolkit })
        expect(second.text).toBe("The note says hi; 2 + 40 = 42.")
        expect(second.finishReason).toBe("stop")

        const requests = yield* server.requests
        expect(requests).toHaveLength(2)
        expect(requests[1]?.body).toMatchObject({
          messages: [
            { role: "system" },
            { role: "user" },
            {
              role: "assistant",
              content: "Let me check.",
              tool_calls: [
                { id: "call_read", type: "function", function: { name: "read_file", arguments: "{\"path\":\"notes/today.md\"}" } },
                { id: "call_add", type: "function", function: { name: "add", arguments: "{\"a\":2,\"b\":40}" } }
              ]
            },
            { role: "tool", tool_call_id: "call_read", content: "contents of notes/today.md" },
            { role: "tool", tool_call_id: "call_add", content: "42" }
          ]
        })
      })
    ))

  it.scoped("streamText: text deltas, tool-call argument deltas, tool calls, finish with usage", () =>
    withChatModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(turnWithTwoCalls)
        const parts = Chunk.toReadonlyArray(
          yield* Stream.runCollect(LanguageModel.streamText({ prompt, toolkit: TestToolkit }))
        )
        const phases = streamPhases(parts)
        expect(phases).toEqual([
          "response-metadata",
          "text-start", "text-delta", "text-end",
          "tool-params-start", "tool-params-delta",
          "tool-params-start", "tool-params-delta",
          "tool-params-end", "tool-call", "tool-params-end", "tool-call",
          ...phases.slice(12)
        ])
        expect([...phases.slice(12)].sort()).toEqual(["finish", "tool-result", "tool-result"])

        const text = parts.flatMap((part) => part.type === "text-delta" ? [part.delta] : []).join("")
        expect(text).toBe("Let me check.")
        expect(parts.filter((part) => part.type === "text-delta").length).toBeGreaterThan(1)
        const argDeltas = parts.flatMap((part) => part.type === "tool-params-delta" && part.id === "call_add" ? [part.delta] : [])
        expect(argDeltas.length).toBeGreaterThan(1)
        expect(argDeltas.join("")).toBe("{\"a\":2,\"b\":40}")
        const calls = parts.flatMap((part) => part.type === "tool-call" ? [[part.id, part.name, part.params]] : [])
        expect(calls).toEqual([["call_read", "read_file", { path: "notes/today.md" }], ["call_add", "add", { a: 2, b: 40 }]])
        const results = parts.flatMap((part) => part.type === "tool-result" ? [part.result] : [])
        expect(results).toEqual(["contents of notes/today.md", 42])
        const finish = parts.find((part) => part.type === "finish")
        expect(finish?.type === "finish" && [finish.reason, finish.usage.inputTokens, finish.usage.outputTokens, finish.usage.cachedInputTokens])
          .toEqual(["tool-calls", 100, 20, 60])

        const [request] = yield* server.requests
        expect(request?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
      })
    ))
})
