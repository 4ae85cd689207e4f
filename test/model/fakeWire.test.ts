import { OpenAiClient, Generated } from "@effect/ai-openai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { responsesBody, responsesEvents } from "../support/fakeModelWire.js"
import { twoCalls } from "./tools.js"

// @effect/ai-openai skips stream frames it cannot decode, so a wrong fake shape would only show up as
// missing parts. Decode every frame with the package's own schemas instead.

const turn = { text: "Checking two things.", toolCalls: twoCalls, usage: { input: 10, output: 5, cached: 2 } }

const dataOf = (frame: string): string => {
  const line = frame.split("\n").find((l) => l.startsWith("data: "))
  return line === undefined ? "" : line.slice("data: ".length)
}

describe("fake Responses wire", () => {
  it.effect("every streamed event decodes as a ResponseStreamEvent", () =>
    Effect.gen(function*() {
      const frames = responsesEvents("resp_1", "gpt-test", turn)
      const decode = Schema.decodeUnknown(Schema.parseJson(OpenAiClient.ResponseStreamEvent))
      const types: Array<string> = []
      for (const frame of frames) {
        const event = yield* decode(dataOf(frame))
        types.push(event.type)
      }
      expect(types).toContain("response.function_call_arguments.delta")
      expect(types.at(-1)).toBe("response.completed")
      expect(types).toHaveLength(frames.length)
    }))

  it.effect("the whole response decodes as Generated.Response", () =>
    Effect.gen(function*() {
      const response = yield* Schema.decodeUnknown(Generated.Response)(responsesBody("resp_1", "gpt-test", turn))
      expect(response.output).toHaveLength(3)
      expect(response.usage?.input_tokens_details.cached_tokens).toBe(2)
    }))
})
