import { LanguageModel, Prompt, Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Schema, Stream } from "effect"
import * as fc from "fast-check"
import { makeWireCache, toMessagesJson, toRequestBody } from "../../src/model/ChatCompletionsPrompt.js"
import { partsRunnerOf } from "../../src/model/partsRunner.js"
import { FakeReply } from "../support/fakeModelServer.js"
import { withChatModel } from "./harness.js"
import { Add, ReadFile, TestToolkit, twoCallPrompt, twoCalls } from "./tools.js"

const system = (content: string): Prompt.Message => Prompt.makeMessage("system", { content })
const user = (text: string): Prompt.Message =>
  Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text })] })
const assistant = (text: string, calls: ReadonlyArray<{ id: string; name: string }>): Prompt.Message =>
  Prompt.makeMessage("assistant", {
    content: [
      ...(text === "" ? [] : [Prompt.makePart("text", { text })]),
      ...calls.map((call) =>
        Prompt.makePart("tool-call", { id: call.id, name: call.name, params: { path: call.id }, providerExecuted: false })
      )
    ]
  })
const tool = (id: string, result: string): Prompt.Message =>
  Prompt.makeMessage("tool", {
    content: [Prompt.makePart("tool-result", { id, name: "read_file", isFailure: false, result, providerExecuted: false })]
  })

/** The body's text: what the server reads. */
const text = (body: Uint8Array) => new TextDecoder().decode(body)

const options = (messages: ReadonlyArray<Prompt.Message>, withTools: boolean): LanguageModel.ProviderOptions => ({
  prompt: Prompt.fromMessages(messages),
  tools: withTools ? [ReadFile, Add] : [],
  toolChoice: withTools ? "auto" : "none",
  responseFormat: { type: "text" },
  span: undefined as never
})

const message = fc.oneof(
  fc.string().map(user),
  fc.tuple(fc.string(), fc.array(fc.record({ id: fc.string({ minLength: 1 }), name: fc.constantFrom("read_file", "add") }), { maxLength: 2 }))
    .map(([text, calls]) => assistant(text, calls)),
  fc.tuple(fc.string({ minLength: 1 }), fc.string()).map(([id, result]) => tool(id, result))
)

describe("Chat Completions request body", () => {
  it.effect("is the JSON of model, messages, tools, tool choice and the extra fields, in that order", () =>
    Effect.gen(function*() {
      const messages = [system("You are kern."), user("hi \"there\"\n"), assistant("", []), assistant("ok", [{ id: "c1", name: "read_file" }]), tool("c1", "x")]
      const body = text(yield* toRequestBody("m", options(messages, true), makeWireCache(), { stream: true }))
      const parsed = JSON.parse(body)
      expect(Object.keys(parsed)).toEqual(["model", "messages", "tools", "tool_choice", "stream"])
      expect(parsed.model).toBe("m")
      // The empty assistant message has no wire form.
      expect(parsed.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "tool"])
      expect(parsed.messages[1]).toEqual({ role: "user", content: "hi \"there\"\n" })
      expect(parsed.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["read_file", "add"])
      const bare = JSON.parse(text(yield* toRequestBody("m", options([user("x")], false))))
      expect(bare).toEqual({ model: "m", messages: [{ role: "user", content: "x" }] })
    }))

  it.effect("built step by step with one cache, it is the body built afresh (property)", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(fc.array(fc.array(message, { maxLength: 4 }), { minLength: 1, maxLength: 6 }), fc.boolean(), (steps, withTools) => {
          const cache = makeWireCache()
          const history: Array<Prompt.Message> = [system("s")]
          for (const step of steps) {
            history.push(...step)
            const cached = text(Effect.runSync(toRequestBody("m", options(history, withTools), cache)))
            const fresh = text(Effect.runSync(toRequestBody("m", options(history, withTools))))
            expect(cached).toBe(fresh)
            expect(() => JSON.parse(cached)).not.toThrow()
          }
        }),
        { numRuns: 200 }
      )
    ))

  // The last body's messages are copied whole only while the prompt begins with them: a cut that moves (messages
  // gone from the front), a message replaced by another (a copy carrying a cache mark or a recall block), a prompt
  // that shrinks or goes back to an older one, each is the body built afresh.
  it.effect("built with one cache over prompts that lose, replace or revisit messages, it is the body built afresh (property)", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(
          fc.array(
            fc.oneof(
              fc.array(message, { maxLength: 3 }).map((added) => ({ kind: "add" as const, added })),
              fc.nat(4).map((count) => ({ kind: "cut" as const, count })),
              fc.tuple(fc.nat(), message).map(([at, replacement]) => ({ kind: "replace" as const, at, replacement })),
              fc.nat().map((back) => ({ kind: "revisit" as const, back }))
            ),
            { minLength: 1, maxLength: 10 }
          ),
          fc.boolean(),
          (steps, withTools) => {
            const cache = makeWireCache()
            let history: ReadonlyArray<Prompt.Message> = [system("s"), user("first")]
            const seen: Array<ReadonlyArray<Prompt.Message>> = []
            for (const step of steps) {
              if (step.kind === "add") history = [...history, ...step.added]
              else if (step.kind === "cut") history = [history[0]!, ...history.slice(1 + Math.min(step.count, history.length - 1))]
              else if (step.kind === "replace") history = history.map((m, i) => i === step.at % history.length ? step.replacement : m)
              else if (seen.length > 0) history = seen[step.back % seen.length]!
              seen.push(history)
              const cached = text(Effect.runSync(toRequestBody("m", options(history, withTools), cache)))
              const fresh = text(Effect.runSync(toRequestBody("m", options(history, withTools))))
              expect(cached).toBe(fresh)
            }
          }
        ),
        { numRuns: 300 }
      )
    ))
})

// The body as JSON.stringify gives it for the whole request object, tools rendered afresh: what the joined text
// must equal, byte for byte.
const referenceBody = (
  options: LanguageModel.ProviderOptions,
  extra: { readonly stream?: boolean; readonly stream_options?: { readonly include_usage: boolean } }
) => {
  const choice = options.toolChoice
  const tools = options.tools.length === 0 ? {} : {
    tools: options.tools.map((tool) => {
      const description = tool.description ?? Tool.getDescriptionFromSchemaAst(tool.parametersSchema.ast)
      return {
        type: "function",
        function: {
          name: tool.name,
          ...(description === undefined ? {} : { description }),
          parameters: Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast)
        }
      }
    }),
    tool_choice: typeof choice === "string" ? choice : "tool" in choice
      ? { type: "function", function: { name: choice.tool } }
      : choice.mode ?? "auto"
  }
  const format = options.responseFormat
  return JSON.stringify({
    model: "m",
    messages: JSON.parse(Effect.runSync(toMessagesJson(options.prompt))),
    ...tools,
    ...(format.type === "json"
      ? {
        response_format: {
          type: "json_schema",
          json_schema: { name: format.objectName, schema: Tool.getJsonSchemaFromSchemaAst(format.schema.ast), strict: true }
        }
      }
      : {}),
    ...extra
  })
}

const Answer = Schema.Struct({ verdict: Schema.String, score: Schema.Number })

describe("Chat Completions request body, tools joined from their cached JSON", () => {
  it.effect("is byte for byte JSON.stringify of the request object, step after step (property)", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(
          fc.array(fc.array(message, { maxLength: 3 }), { minLength: 1, maxLength: 4 }),
          fc.constantFrom<ReadonlyArray<Tool.Any>>([], [ReadFile], [ReadFile, Add], [Add, ReadFile]),
          fc.constantFrom<LanguageModel.ToolChoice<string>>("auto", "none", "required", { tool: "add" }, { mode: "required", oneOf: ["add"] }),
          fc.boolean(),
          fc.constantFrom({}, { stream: true }, { stream: true, stream_options: { include_usage: true } }),
          (steps, tools, toolChoice, json, extra) => {
            const cache = makeWireCache()
            const history: Array<Prompt.Message> = [system("s")]
            for (const step of steps) {
              history.push(...step)
              const options: LanguageModel.ProviderOptions = {
                prompt: Prompt.fromMessages(history),
                tools,
                toolChoice,
                responseFormat: json ? { type: "json", objectName: "answer", schema: Answer } : { type: "text" },
                span: undefined as never
              }
              expect(text(Effect.runSync(toRequestBody("m", options, cache, extra)))).toBe(referenceBody(options, extra))
            }
          }
        ),
        { numRuns: 300 }
      )
    ))
})

describe("kern's fast path over Chat Completions", () => {
  it.scoped("hands over the encoded parts of a streamed answer, tool calls with their raw arguments", () =>
    withChatModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.toolCalls([...twoCalls, { id: "call_x", name: "no_such_tool", args: { q: 1 } }], { text: "Let me check." }))
        const model = yield* LanguageModel.LanguageModel
        const runParts = partsRunnerOf(model)
        expect(runParts).toBeDefined()
        const batches: Array<ReadonlyArray<{ readonly type: string }>> = []
        yield* runParts!({ prompt: twoCallPrompt, toolkit: undefined }, (parts) => Effect.sync(() => void batches.push(parts)))
        const parts = batches.flat()
        expect(parts.filter((p) => p.type === "tool-call").map((p) => (p as unknown as { name: string }).name))
          .toEqual(["read_file", "add", "no_such_tool"])
        expect(parts.at(-1)?.type).toBe("finish")
        expect(parts.filter((p) => p.type === "text-delta").map((p) => (p as unknown as { delta: string }).delta).join(""))
          .toBe("Let me check.")
      })
    ))

  it.scoped("a failing server is an AiError, as through streamText", () =>
    withChatModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.error(400, { body: JSON.stringify({ error: { message: "bad request" } }) }))
        const model = yield* LanguageModel.LanguageModel
        const error = yield* Effect.flip(partsRunnerOf(model)!({ prompt: twoCallPrompt, toolkit: undefined }, () => Effect.void))
        expect(error._tag).toBeDefined()
        expect(error.message).toContain("bad request")
      })
    ))

  it.scoped("streamText with tool call resolution off decodes with one decoder per toolkit, call after call", () =>
    withChatModel((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.toolCalls(twoCalls), FakeReply.toolCalls(twoCalls))
        for (let i = 0; i < 2; i++) {
          const parts = Chunk.toReadonlyArray(
            yield* Stream.runCollect(LanguageModel.streamText({ prompt: twoCallPrompt, toolkit: TestToolkit, disableToolCallResolution: true }))
          )
          const calls = parts.filter((p) => p.type === "tool-call")
          expect(calls.map((c) => c.type === "tool-call" ? c.params : undefined)).toEqual([{ path: "notes/today.md" }, { a: 2, b: 40 }])
          expect(parts.some((p) => p.type === "tool-result")).toBe(false)
        }
      })
    ))
})

