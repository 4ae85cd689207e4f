import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { fittedSize } from "../../src/media/imageLimits.js"
import { MediaStore } from "../../src/media/MediaStore.js"
import { Attachment } from "../../src/session/messages.js"
import { FakeReply, makeWith } from "../support/fakeModelServer.js"
import { agentDir, apis, onePagePdf, photo, runtime, sizeOf, turnWith } from "./mediaTurn.js"

// A message with a photo and a PDF reaches each of the three APIs in that API's own shape: the photo fitted to the
// provider's limits and re-encoded, the PDF as a file part, each after a label naming it, the message's text last. A
// model that cannot see gets notes and the PDF's text instead; older images than the newest six become notes.

type Content = ReadonlyArray<Record<string, unknown>>

/** The content of the message a recorded media part is in, per API. */
const contentAt = (body: unknown, index: number): Content => {
  const record = body as { messages?: ReadonlyArray<{ content: unknown }>; input?: ReadonlyArray<{ content: unknown }> }
  const list = record.input ?? record.messages ?? []
  return list[index]!.content as Content
}

const types = (content: Content) => content.map((part) => part["type"])
const textOf = (part: Record<string, unknown> | undefined) => String(part?.["text"] ?? "")

const expected = {
  anthropic: { types: ["text", "image", "text", "document", "text"], box: "anthropic" },
  responses: { types: ["input_text", "input_image", "input_text", "input_file", "input_text"], box: "openai" },
  chat: { types: ["text", "image_url", "text", "file", "text"], box: "both" }
} as const

/** A photo and a PDF ingested into the agent's media store; the PDF with the text the mediain extractor gives it. */
const receiptAndContract = Effect.gen(function*() {
  const media = yield* MediaStore
  const image = yield* photo(3000, 2000)
  const receipt = yield* media.ingest({ name: "receipt.jpg", bytes: image })
  const pdf = onePagePdf()
  const stored = yield* media.ingest({ name: "contract.pdf", bytes: pdf })
  const contract = new Attachment({ ...stored, pages: 1, text: "[page 1]\nTotal due 42" })
  return { receipt: new Attachment({ ...receipt, width: 3000, height: 2000 }), contract, pdf, image }
})

describe("a message's photo and PDF in each API's request", () => {
  for (const api of ["anthropic", "responses", "chat"] as const) {
    it.live(`${api}: the photo fitted and re-encoded as an image part, the PDF as a file part, the text last`, () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* makeWith({ messagesApi: true })
        const dir = agentDir(server.baseURL, apis[api])
        yield* Effect.gen(function*() {
          const { receipt, contract, pdf } = yield* receiptAndContract
          yield* server.reply(FakeReply.text("A receipt and a contract."))
          const outcome = yield* turnWith("what are these?", [receipt, contract])
          expect(outcome).toMatchObject({ reply: "A receipt and a contract." })
          const [request] = yield* server.modelRequests
          const [image, file] = request!.media
          expect(request!.media).toHaveLength(2)

          expect(image).toMatchObject({ type: "image", mediaType: "image/jpeg" })
          const size = yield* sizeOf(image!.data)
          expect(size).toEqual({ ...fittedSize(expected[api].box, 3000, 2000), format: "jpeg" })
          if (api === "anthropic") expect(size.width! * size.height!).toBeLessThanOrEqual(1_150_000)
          if (api !== "anthropic") expect(Math.min(size.width!, size.height!)).toBeLessThanOrEqual(768)

          expect(file).toMatchObject({ type: "file", mediaType: "application/pdf", fileName: "contract.pdf" })
          expect(Array.from(file!.data)).toEqual(Array.from(pdf))

          // One user message: each file after its label, the message's text last.
          expect(file!.message).toBe(image!.message)
          const content = contentAt(request!.body, image!.message)
          expect(types(content)).toEqual(expected[api].types)
          expect([image!.part, file!.part]).toEqual([1, 3])
          expect(textOf(content[0])).toMatch(/^\[image: receipt\.jpg, \d+ KB, 3000×2000\]$/)
          expect(textOf(content[2])).toMatch(/^\[pdf: contract\.pdf, \d+ (bytes|KB), 1 page\]$/)
          expect(textOf(content[4])).toContain("what are these?")
        }).pipe(Effect.provide(runtime(dir)))
      })), 60_000)
  }

  it.live("a model that cannot see: a note for the photo, the PDF's text, no parts", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({})
      const dir = agentDir(server.baseURL, { provider: "openrouter", model: "deepseek/deepseek-chat" })
      yield* Effect.gen(function*() {
        const { receipt, contract } = yield* receiptAndContract
        yield* server.reply(FakeReply.text("ok"))
        yield* turnWith("what are these?", [receipt, contract])
        const [request] = yield* server.modelRequests
        expect(request!.media).toEqual([])
        const messages = (request!.body as { messages: ReadonlyArray<{ role: string; content: unknown }> }).messages
        const user = messages.find((message) => message.role === "user")!
        // Text only: sent as one string, as servers without content arrays take it.
        expect(typeof user.content).toBe("string")
        expect(user.content).toMatch(/\[image: receipt\.jpg, \d+ KB, 3000×2000, not shown: this model does not take images\]/)
        expect(user.content).toContain("[pdf: contract.pdf")
        expect(user.content).toContain("its text follows]\n[page 1]\nTotal due 42")
      }).pipe(Effect.provide(runtime(dir)))
    })), 60_000)

  it.live("config vision names a model the table does not know: it is sent the photo", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({})
      const dir = agentDir(server.baseURL, { provider: "openai-compatible", model: "my-vlm", vision: ["my-vlm"] })
      yield* Effect.gen(function*() {
        const { receipt, contract } = yield* receiptAndContract
        yield* server.reply(FakeReply.text("ok"))
        yield* turnWith("and now?", [receipt, contract])
        const [request] = yield* server.modelRequests
        // A Chat Completions server that is neither OpenAI nor OpenRouter is sent images, and PDFs as their text.
        expect(request!.media.map((part) => part.type)).toEqual(["image"])
        expect(JSON.stringify(request!.body)).toContain("Total due 42")
      }).pipe(Effect.provide(runtime(dir)))
    })), 60_000)

  it.live("only the newest six images go as parts; older ones become notes, in every step", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({})
      const dir = agentDir(server.baseURL, apis.chat)
      yield* Effect.gen(function*() {
        const media = yield* MediaStore
        const colours = ["#100", "#200", "#300", "#400", "#500", "#600", "#700", "#800"]
        const images = yield* Effect.forEach(colours, (colour, i) =>
          Effect.flatMap(photo(40, 30, colour), (bytes) => media.ingest({ name: `p${i}.jpg`, bytes })))
        yield* server.reply(FakeReply.text("eight"), FakeReply.text("still"))
        yield* turnWith("eight photos", images)
        yield* turnWith("and?")
        const [first, second] = yield* server.modelRequests
        for (const request of [first!, second!]) {
          expect(request.media).toHaveLength(6)
          const text = JSON.stringify(request.body)
          expect(text).toMatch(/\[image: p0\.jpg, \d+ bytes, 40×30, not shown: an earlier image \(only the last 6 images of the conversation are sent\)\]/)
          expect(text).toMatch(/\[image: p1\.jpg, \d+ bytes, 40×30, not shown: an earlier image/)
          expect(text).toMatch(/\[image: p2\.jpg, \d+ bytes, 40×30\]/)
        }
        // The second request sends the very same bytes: the fitted images were kept, not made again.
        expect(second!.media.map((part) => Array.from(part.data))).toEqual(first!.media.map((part) => Array.from(part.data)))
      }).pipe(Effect.provide(runtime(dir)))
    })), 60_000)
})
