import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fittedSize } from "../../src/media/imageLimits.js"
import { FakeReply, makeWith } from "../support/fakeModelServer.js"
import { makePdf } from "../support/pdfFiles.js"
import { agentDir, apis, photo, runtime, sizeOf, transparentPng, turnWith } from "./mediaTurn.js"

// The read tool on an image in the workspace: its result says what the image is, and the model that sees is shown
// it in a user message right after the results (tool results are text on two of the three wires), fitted as a
// message's photo is; a model that cannot see gets the note; a file changed since it was read is not shown.

type Item = { readonly role?: string; readonly type?: string; readonly content?: unknown }
const itemsOf = (body: unknown): ReadonlyArray<Item> => {
  const record = body as { messages?: ReadonlyArray<Item>; input?: ReadonlyArray<Item> }
  return record.input ?? record.messages ?? []
}
const types = (item: Item | undefined) => (item?.content as ReadonlyArray<{ type: string }>).map((part) => part.type)

const readCat = FakeReply.toolCalls([{ id: "call_1", name: "read", args: { path: "photos/cat.png" } }])

describe("read on a workspace image", () => {
  for (const api of ["anthropic", "responses", "chat"] as const) {
    it.live(`${api}: the image follows the tool result as an image part, fitted, its transparency kept`, () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* makeWith({ messagesApi: true })
        const dir = agentDir(server.baseURL, apis[api])
        NodeFs.mkdirSync(NodePath.join(dir, "photos"))
        NodeFs.writeFileSync(NodePath.join(dir, "photos", "cat.png"), yield* transparentPng(2400, 1200))
        yield* Effect.gen(function*() {
          yield* server.reply(readCat, FakeReply.text("a red square"))
          expect(yield* turnWith("what is in photos/cat.png?")).toMatchObject({ reply: "a red square" })
          const [, second] = yield* server.modelRequests
          expect(second!.media).toHaveLength(1)
          const [image] = second!.media
          expect(image).toMatchObject({ type: "image", mediaType: "image/png" })
          const box = api === "anthropic" ? "anthropic" : api === "responses" ? "openai" : "both"
          expect(yield* sizeOf(image!.data)).toEqual({ ...fittedSize(box, 2400, 1200), format: "png" })

          const items = itemsOf(second!.body)
          const text = JSON.stringify(second!.body)
          expect(text).toContain("[image: photos/cat.png")
          expect(text).toContain("2400×1200, shown in the message after this result]")
          if (api === "anthropic") {
            // One user turn: the tool result first (Anthropic's rule, which the fake server checks), then the image.
            expect(image!.message).toBe(items.length - 1)
            expect(types(items[items.length - 1])).toEqual(["tool_result", "text", "image"])
          } else if (api === "responses") {
            expect(items.slice(-2).map((item) => item.type ?? item.role)).toEqual(["function_call_output", "user"])
            expect(types(items[items.length - 1])).toEqual(["input_text", "input_image"])
          } else {
            expect(items.slice(-2).map((item) => item.role)).toEqual(["tool", "user"])
            expect(types(items[items.length - 1])).toEqual(["text", "image_url"])
          }
        }).pipe(Effect.provide(runtime(dir)))
      })), 60_000)
  }

  it.live("a model that cannot see gets the note; after a restart, a file changed since it was read is not shown", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({})
      const dir = agentDir(server.baseURL, { provider: "openrouter", model: "deepseek/deepseek-chat" })
      NodeFs.mkdirSync(NodePath.join(dir, "photos"))
      const file = NodePath.join(dir, "photos", "cat.png")
      NodeFs.writeFileSync(file, yield* photo(300, 200))
      yield* Effect.gen(function*() {
        yield* server.reply(readCat, FakeReply.text("I cannot see it"))
        yield* turnWith("look at photos/cat.png")
        const [, second] = yield* server.modelRequests
        expect(second!.media).toEqual([])
        expect(JSON.stringify(second!.body)).toContain("300×200, not shown: this model does not take images]")
      }).pipe(Effect.provide(runtime(dir)))

      // The same conversation, now with a model that sees, after the file was replaced.
      const config = NodePath.join(dir, ".kern", "config.json")
      NodeFs.writeFileSync(config, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(config, "utf8")), model: "openai/gpt-4o" }))
      NodeFs.writeFileSync(file, yield* photo(300, 200, "#f00"))
      yield* Effect.gen(function*() {
        yield* server.reply(FakeReply.text("ok"))
        yield* turnWith("and now?")
        const [, , third] = yield* server.modelRequests
        expect(third!.media).toEqual([])
        expect(JSON.stringify(third!.body)).toContain("not shown: the file changed since it was read]")
      }).pipe(Effect.provide(runtime(dir)))
    })), 60_000)

  it.live("read on a PDF: its text page by page, as numbered lines, by offset and limit", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({})
      const dir = agentDir(server.baseURL, apis.chat)
      NodeFs.writeFileSync(NodePath.join(dir, "contract.pdf"), makePdf(["Parties", "Terms", "Signatures"]))
      yield* Effect.gen(function*() {
        yield* server.reply(
          FakeReply.toolCalls([{ id: "call_1", name: "read", args: { path: "contract.pdf", offset: 4, limit: 2 } }]),
          FakeReply.text("terms")
        )
        yield* turnWith("what are the terms?")
        const [, second] = yield* server.modelRequests
        const messages = (second!.body as { messages: ReadonlyArray<{ role: string; content: unknown }> }).messages
        const result = String(messages.find((message) => message.role === "tool")!.content)
        expect(result).toMatch(/^\[contract\.pdf: PDF, [\d.]+ (B|KB), 3 pages: its text, page by page\]\n/)
        expect(result).toContain("4\t--- page 2 ---")
        expect(result).toContain("5\tTerms")
        expect(result).not.toContain("Parties")
        expect(result).toContain("continue with offset 6")
      }).pipe(Effect.provide(runtime(dir)))
    })), 60_000)
})
