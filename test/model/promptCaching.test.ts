import { LanguageModel, Prompt } from "@effect/ai"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import * as fc from "fast-check"
import { cacheBreakpoints, withCacheBreakpoints } from "../../src/context/caching.js"
import { toMessagesJson } from "../../src/model/ChatCompletionsPrompt.js"
import { layerFromConfig } from "../../src/model/Provider.js"
import { FakeReply, makeWith } from "../support/fakeModelServer.js"
import { loadedConfig, withModel } from "./harness.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"

const system = (content: string) => Prompt.makeMessage("system", { content })
const user = (text: string) => Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text })] })
const answer = (text: string) => Prompt.makeMessage("assistant", { content: [Prompt.makePart("text", { text })] })
const call = (id: string) =>
  Prompt.makeMessage("assistant", {
    content: [Prompt.makePart("tool-call", { id, name: "read_file", params: { path: `${id}.md` }, providerExecuted: false })]
  })
const result = (id: string) =>
  Prompt.makeMessage("tool", {
    content: [Prompt.makePart("tool-result", { id, name: "read_file", isFailure: false, result: `contents of ${id}`, providerExecuted: false })]
  })

/** A conversation of `turns` turns: a question, a tool call, its result, the answer (one wire message each). */
const conversation = (turns: number): Array<Prompt.Message> => [
  system("You are kern."),
  ...Array.from({ length: turns }, (_, t) => [user(`question ${t}`), call(`c${t}`), result(`c${t}`), answer(`answer ${t}`)]).flat()
]

type WireMessage = { readonly role: string; readonly content: unknown }
const bodyMessages = (body: unknown): ReadonlyArray<WireMessage> => (body as { messages: ReadonlyArray<WireMessage> }).messages

const ephemeralText = (text: string) => [{ type: "text", text, cache_control: { type: "ephemeral" } }]

describe("prompt caching over Chat Completions (OpenRouter's form for Anthropic models)", () => {
  it.scoped("cache_control sits exactly on the marked messages; every other message is sent as without marks", () =>
    withModel({ provider: "openrouter", model: "anthropic/claude-sonnet-4" }, (server) =>
      Effect.gen(function*() {
        const messages = conversation(12)
        const marks = cacheBreakpoints(messages)
        expect(marks).toEqual([0, 37, 45])
        yield* server.reply(FakeReply.text("plain"), FakeReply.text("marked"))
        yield* LanguageModel.generateText({ prompt: Prompt.fromMessages(messages) })
        yield* LanguageModel.generateText({ prompt: Prompt.fromMessages(withCacheBreakpoints(messages)) })
        const [plain, marked] = yield* server.modelRequests
        const before = bodyMessages(plain!.body)
        const after = bodyMessages(marked!.body)
        expect(after).toHaveLength(messages.length)
        after.forEach((message, i) => {
          if (marks.includes(i)) {
            expect(typeof before[i]!.content).toBe("string")
            expect(message).toEqual({ role: before[i]!.role, content: ephemeralText(before[i]!.content as string) })
          } else {
            expect(message).toEqual(before[i])
          }
        })
        expect(JSON.stringify(marked!.body).split("cache_control").length - 1).toBe(3)
        expect(JSON.stringify(plain!.body)).not.toContain("cache_control")
      })))
})

describe("Chat Completions encoding of a marked message", () => {
  const encode = (messages: ReadonlyArray<Prompt.Message>) =>
    JSON.parse(Effect.runSync(toMessagesJson(Prompt.fromMessages(messages)))) as ReadonlyArray<WireMessage>
  const mark = <M extends Prompt.Message>(message: M, cacheControl: unknown = { type: "ephemeral" }): M => ({
    ...message,
    options: { ...message.options, anthropic: { cacheControl } }
  })

  it("puts the mark on the last content part: text joined as today, images kept, the last tool result", () => {
    const withImage = Prompt.makeMessage("user", {
      content: [
        Prompt.makePart("text", { text: "look" }),
        Prompt.makePart("file", { mediaType: "image/png", data: "aGk=" })
      ]
    })
    const twoTexts = Prompt.makeMessage("user", {
      content: [Prompt.makePart("text", { text: "a" }), Prompt.makePart("text", { text: "b" })]
    })
    const twoResults = Prompt.makeMessage("tool", {
      content: [
        Prompt.makePart("tool-result", { id: "x", name: "read_file", isFailure: false, result: "one", providerExecuted: false }),
        Prompt.makePart("tool-result", { id: "y", name: "read_file", isFailure: false, result: { n: 2 }, providerExecuted: false })
      ]
    })
    expect(encode([mark(twoTexts)])).toEqual([{ role: "user", content: ephemeralText("a\nb") }])
    expect(encode([mark(withImage)])).toEqual([{
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image_url", image_url: { url: "data:image/png;base64,aGk=" }, cache_control: { type: "ephemeral" } }
      ]
    }])
    expect(encode([mark(twoResults)])).toEqual([
      { role: "tool", tool_call_id: "x", content: "one" },
      { role: "tool", tool_call_id: "y", content: ephemeralText("{\"n\":2}") }
    ])
    expect(encode([mark(answer("done"))])).toEqual([{ role: "assistant", content: ephemeralText("done") }])
    // A 1-hour mark keeps its ttl.
    expect(encode([mark(system("s"), { type: "ephemeral", ttl: "1h" })])).toEqual([
      { role: "system", content: [{ type: "text", text: "s", cache_control: { type: "ephemeral", ttl: "1h" } }] }
    ])
  })

  it("leaves unmarked what cannot carry a mark, and ignores marks it does not know", () => {
    // An assistant message that only calls tools has no text part to carry it.
    expect(encode([mark(call("c1"))])).toEqual(encode([call("c1")]))
    expect(encode([mark(user("q"), { type: "persistent" })])).toEqual(encode([user("q")]))
    expect(encode([mark(user("q"), "ephemeral")])).toEqual(encode([user("q")]))
    expect(encode([mark(user(""))])).toEqual(encode([user("")]))
    expect(encode([mark(system(""))])).toEqual([{ role: "system", content: "" }])
  })

  const message = fc.oneof(
    fc.string().map(user),
    fc.string().map(answer),
    fc.string({ minLength: 1 }).map(call),
    fc.string({ minLength: 1 }).map(result)
  )

  /** A marked body with its marks taken off: a lone marked text part back to the plain string it was. */
  const unmarked = (messages: ReadonlyArray<WireMessage>) =>
    messages.map((m) =>
      Array.isArray(m.content) && m.content.length === 1 && m.content[0].type === "text"
        ? { ...m, content: m.content[0].text }
        : m
    )

  it("with the marks taken off, a marked body is the unmarked one; one cache_control per mark (property)", () =>
    fc.assert(
      fc.property(fc.array(message, { maxLength: 60 }), (rest) => {
        const messages = [system("s"), ...rest]
        const plain = encode(messages)
        const marked = encode(withCacheBreakpoints(messages))
        expect(unmarked(marked)).toEqual(plain)
        // Every mark is carried, except on empty text, which Anthropic refuses to mark.
        const carried = cacheBreakpoints(messages).filter((i) => plain[i]!.content !== "")
        expect(JSON.stringify(marked).split("cache_control").length - 1).toBe(carried.length)
      }),
      { numRuns: 300 }
    ))
})

describe("prompt caching over Anthropic's Messages API (@effect/ai-anthropic)", () => {
  it.scoped("the marks reach the request as cache_control on the system block, the mid-history and the last user message", () =>
    Effect.gen(function*() {
      const server = yield* makeWith({ messagesApi: true })
      const model = layerFromConfig(
        loadedConfig({ provider: "anthropic", model: "claude-sonnet-4", baseURL: server.baseURL }, { ANTHROPIC_API_KEY: "ak" }),
        { retry: false }
      ).pipe(Layer.provide(SpendGuard.layerNone))
      const messages = conversation(12)
      yield* server.reply(FakeReply.text("Cached."), FakeReply.text("Streamed."))
      const response = yield* LanguageModel.generateText({ prompt: Prompt.fromMessages(withCacheBreakpoints(messages)) }).pipe(
        Effect.provide(model.pipe(Layer.provide(NodeHttpClient.layerUndici)))
      )
      expect(response.text).toBe("Cached.")
      const [request] = yield* server.modelRequests
      expect(request?.path).toBe("/messages")
      const body = request!.body as {
        system: ReadonlyArray<{ type: string; text: string; cache_control?: unknown }>
        messages: ReadonlyArray<{ role: string; content: ReadonlyArray<{ type: string; text?: string; cache_control?: unknown }> }>
      }
      expect(body.system).toEqual([{ type: "text", text: "You are kern.", cache_control: { type: "ephemeral" } }])
      const marked = body.messages.flatMap((m) =>
        m.content.filter((block) => block.cache_control !== undefined).map((block) => ({ role: m.role, block }))
      )
      expect(marked).toEqual([
        { role: "user", block: { type: "text", text: "question 9", cache_control: { type: "ephemeral" } } },
        { role: "user", block: { type: "text", text: "question 11", cache_control: { type: "ephemeral" } } }
      ])
      // Nothing else in the request carries a mark.
      expect(JSON.stringify(body).split("cache_control").length - 1).toBe(3)

      // Streaming (as a turn's steps run) sends the same marks.
      const streamed = yield* LanguageModel.streamText({ prompt: Prompt.fromMessages(withCacheBreakpoints(messages)) }).pipe(
        Stream.runCollect,
        Effect.provide(model.pipe(Layer.provide(NodeHttpClient.layerUndici)))
      )
      expect(Chunk.toReadonlyArray(streamed).flatMap((part) => part.type === "text-delta" ? [part.delta] : []).join("")).toBe("Streamed.")
      const [, second] = yield* server.modelRequests
      expect(second?.body).toMatchObject({ stream: true, system: body.system })
      expect((second!.body as { messages: unknown }).messages).toEqual(body.messages)
    }))
})
