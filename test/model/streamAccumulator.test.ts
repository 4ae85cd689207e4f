import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { rawArgumentsKey } from "../../src/kernel/toolArgs.js"
import { makeStreamAccumulator } from "../../src/model/ChatCompletionsStream.js"
import type { ChatCompletionChunk } from "../../src/model/ChatCompletionsWire.js"

const context = { provider: "test", baseURL: "http://127.0.0.1/v1" }

/** Cuts `text` at the given points (sorted, deduplicated, inside the text). */
const cut = (text: string, points: ReadonlyArray<number>): Array<string> => {
  const at = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b)
  const out: Array<string> = []
  let last = 0
  for (const p of [...at, text.length]) {
    out.push(text.slice(last, p))
    last = p
  }
  return out
}

const toolChunk = (index: number, fields: { id?: string; name?: string; args?: string }): ChatCompletionChunk => ({
  choices: [{
    index: 0,
    delta: {
      tool_calls: [{
        index,
        ...(fields.id === undefined ? {} : { id: fields.id }),
        function: {
          ...(fields.name === undefined ? {} : { name: fields.name }),
          arguments: fields.args ?? ""
        }
      }]
    }
  }]
})

const run = (chunks: ReadonlyArray<ChatCompletionChunk>) => {
  const acc = makeStreamAccumulator(context)
  const parts = chunks.flatMap((chunk) => Either.getOrThrow(acc.push(chunk)))
  return [...parts, ...Either.getOrThrow(acc.end())]
}

const jsonObject = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }),
  fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }))
)

describe("Chat Completions stream accumulator", () => {
  it("reassembles interleaved tool-call argument fragments, however they are cut", () => {
    fc.assert(
      fc.property(
        jsonObject,
        jsonObject,
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (a, b, cutsA, cutsB) => {
          const piecesA = cut(JSON.stringify(a), cutsA)
          const piecesB = cut(JSON.stringify(b), cutsB)
          const chunks: Array<ChatCompletionChunk> = [
            toolChunk(0, { id: "call_a", name: "first" }),
            toolChunk(1, { id: "call_b", name: "second" })
          ]
          // Interleave the two calls' fragments.
          for (let i = 0; i < Math.max(piecesA.length, piecesB.length); i++) {
            const pa = piecesA[i]
            const pb = piecesB[i]
            if (pa !== undefined) chunks.push(toolChunk(0, { args: pa }))
            if (pb !== undefined) chunks.push(toolChunk(1, { args: pb }))
          }
          chunks.push({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })
          const parts = run(chunks)
          const calls = parts.flatMap((p) => p.type === "tool-call" ? [[p.id, p.name, p.params]] : [])
          expect(calls).toEqual([["call_a", "first", a], ["call_b", "second", b]])
          const deltas = (id: string) => parts.flatMap((p) => p.type === "tool-params-delta" && p.id === id ? [p.delta] : [])
          expect(deltas("call_a").join("")).toBe(JSON.stringify(a))
          expect(deltas("call_b").join("")).toBe(JSON.stringify(b))
          expect(parts.at(-1)).toMatchObject({ type: "finish", reason: "tool-calls" })
        }
      )
    )
  })

  it("treats a new id at a reused index as a new call", () => {
    const parts = run([
      toolChunk(0, { id: "call_1", name: "a", args: "{}" }),
      toolChunk(0, { id: "call_2", name: "b", args: "{\"x\":1}" }),
      { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }
    ])
    expect(parts.flatMap((p) => p.type === "tool-call" ? [[p.id, p.params]] : [])).toEqual([["call_1", {}], ["call_2", { x: 1 }]])
    expect(parts.at(-1)).toMatchObject({ type: "finish", reason: "tool-calls" })
  })

  it("a stream that ends with neither [DONE] nor a finish reason was cut short", () => {
    const cut = makeStreamAccumulator(context)
    Either.getOrThrow(cut.push({ choices: [{ index: 0, delta: { content: "half an ans" } }] }))
    const ended = cut.end()
    expect(Either.isLeft(ended) && ended.left.message).toContain("closed the stream before the answer was complete")
    const complete = makeStreamAccumulator(context)
    Either.getOrThrow(complete.push({ choices: [{ index: 0, delta: { content: "all of it" } }] }))
    complete.sawDone()
    expect(Either.isRight(complete.end())).toBe(true)
  })

  it("keeps tool arguments that are not a JSON object as the model sent them; fails on an error frame", () => {
    const acc = makeStreamAccumulator(context)
    Either.getOrThrow(acc.push(toolChunk(0, { id: "c", name: "a", args: "{\"x\":" })))
    Either.getOrThrow(acc.push(toolChunk(1, { id: "d", name: "b", args: "[1, 2]" })))
    acc.sawDone()
    const parts = Either.getOrThrow(acc.end())
    // The executor answers these calls with a VALIDATION_ERROR; the response itself is fine.
    expect(parts.flatMap((p) => p.type === "tool-call" ? [[p.id, p.params]] : [])).toEqual([
      ["c", { [rawArgumentsKey]: "{\"x\":" }],
      ["d", { [rawArgumentsKey]: "[1, 2]" }]
    ])
    expect(parts.at(-1)).toMatchObject({ type: "finish", reason: "tool-calls" })

    const errorFrame = makeStreamAccumulator(context).push({ choices: [], error: { message: "overloaded", code: 429 } })
    expect(Either.isLeft(errorFrame) && [errorFrame.left.reason, errorFrame.left.message]).toEqual([
      "rate_limit",
      "test failed while streaming: overloaded"
    ])
  })

  it("reads usage from the final chunk, cached tokens included", () => {
    const parts = run([
      { choices: [{ index: 0, delta: { content: "hi" } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
      {
        choices: [],
        usage: { prompt_tokens: 50, completion_tokens: 3, total_tokens: 53, prompt_tokens_details: { cached_tokens: 40 } }
      }
    ])
    expect(parts.at(-1)).toEqual({
      type: "finish",
      reason: "stop",
      usage: { inputTokens: 50, outputTokens: 3, totalTokens: 53, cachedInputTokens: 40 }
    })
  })
})
