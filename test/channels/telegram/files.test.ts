import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import sharp from "sharp"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import { make as makeFakeTelegram } from "../../support/fakeTelegram.js"
import { agentFolder, pair, startAgent } from "./harness.js"

// Photos, documents and voice notes from Telegram reach the conversation as stored files; what cannot be taken is
// answered with the reason, and a download that failed on the way never loses the message.

const alice = { id: 42, first_name: "Alice", username: "alice" }

const png = (size: number) =>
  Effect.promise(() => sharp({ create: { width: size, height: size, channels: 3, background: "#c03" } }).png().toBuffer())
    .pipe(Effect.map((buffer) => new Uint8Array(buffer)))

const sha = (bytes: Uint8Array) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")

const linked = (agent: { readonly sql: any }) =>
  Effect.map(
    agent.sql`SELECT media_id AS id, conversation_id AS conversation FROM media_links ORDER BY media_id` as Effect.Effect<
      ReadonlyArray<{ readonly id: string; readonly conversation: string }>
    >,
    (rows) => rows.map((row) => ({ ...row }))
  )

describe("Telegram files in", () => {
  it.scopedLive("a photo with a caption: the largest size under the cap is downloaded, stored and submitted with the caption", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model, { media: { maxFileBytes: 50_000 } })
      const agent = yield* startAgent(dir, telegram)
      yield* pair(agent, alice)
      yield* model.reply(FakeReply.text("a red square"))
      const small = yield* png(8)
      const large = yield* png(64)
      const small1 = yield* telegram.addFile(small)
      const large1 = yield* telegram.addFile(large)
      // A size over the cap is never asked for: Telegram says its size first.
      const huge = yield* telegram.addFile(new Uint8Array(10), { size: 60_000 })
      const updateId = yield* telegram.fileMessage({
        from: alice,
        caption: "what colour is this?",
        photo: [
          { file_id: small1, file_unique_id: "a", width: 8, height: 8, file_size: small.length },
          { file_id: large1, file_unique_id: "b", width: 64, height: 64, file_size: large.length },
          { file_id: huge, file_unique_id: "c", width: 2000, height: 2000, file_size: 60_000 }
        ]
      })
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text.includes("red square")))
      const [request] = yield* model.modelRequests
      expect(JSON.stringify(request!.body)).toContain("what colour is this?")
      expect((yield* telegram.calls("getFile")).map((call) => call.body["file_id"])).toEqual([large1])
      const downloads = yield* telegram.calls("download")
      expect(downloads.length).toBe(1)
      // The token is not what the recorded path shows, and the stored file is the large size, byte for byte.
      expect(NodeFs.readFileSync(NodePath.join(dir, ".kern", "media", sha(large)))).toEqual(Buffer.from(large))
      expect(yield* linked(agent)).toEqual([{ id: `med_${sha(large).slice(0, 24)}`, conversation: "telegram-42" }])
      // The offset moved with the message, in one transaction.
      expect(yield* agent.inbox.cursor("telegram:offset")).toEqual(Option.some(String(updateId + 1)))
      yield* agent.stop
    }))

  it.scopedLive("a download that fails on the way (5xx, a cut body, an error page) keeps the offset before the message until it comes whole", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model)
      const agent = yield* startAgent(dir, telegram)
      yield* pair(agent, alice)
      yield* model.reply(FakeReply.text("got your notes"))
      const bytes = new TextEncoder().encode("meeting notes\nline two\n".repeat(50))
      const fileId = yield* telegram.addFile(bytes)
      yield* telegram.failDownloads("500", "truncated", "html")
      const updateId = yield* telegram.fileMessage({
        from: alice,
        document: { file_id: fileId, file_unique_id: "d", file_name: "notes.txt", mime_type: "text/plain", file_size: bytes.length }
      })
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text.includes("got your notes")))
      // Four tries, one message: the failed ones never moved the offset, and nothing was queued twice.
      expect((yield* telegram.calls("download")).length).toBe(4)
      const polls = yield* telegram.calls("getUpdates")
      const beforeSuccess = polls.slice(0, 4).map((poll) => poll.body["offset"])
      expect(beforeSuccess.every((offset) => offset === undefined)).toBe(true)
      expect((yield* model.modelRequests).length).toBe(1)
      expect(NodeFs.readFileSync(NodePath.join(dir, ".kern", "media", sha(bytes)))).toEqual(Buffer.from(bytes))
      expect(yield* agent.inbox.cursor("telegram:offset")).toEqual(Option.some(String(updateId + 1)))
      // What the channel said while it retried never held the bot token.
      const status = (yield* agent.channels.statuses).find((s) => s.interface === "telegram")
      expect(status?.detail ?? "").not.toContain(telegram.token)
      yield* agent.stop
    }))

  it.scopedLive("too large for kern, too large for Telegram, an unknown file: each a clear reply, the offset moves on, nothing reaches the model", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model, { media: { maxFileBytes: 30 * 1024 * 1024 } }), telegram)
      yield* pair(agent, alice)
      const big = yield* telegram.addFile(new Uint8Array(16), { size: 40 * 1024 * 1024 })
      yield* telegram.fileMessage({ from: alice, document: { file_id: big, file_unique_id: "e", file_name: "movie.mp4", file_size: 40 * 1024 * 1024 } })
      const [first] = yield* telegram.awaitChat(alice.id, (messages) => messages.length >= 1)
      expect(first!.text).toBe("movie.mp4 is 40.0 MB; files over 30.0 MB are not taken (config media.maxFileBytes)")

      const over = yield* telegram.addFile(new Uint8Array(16), { size: 25 * 1024 * 1024 })
      yield* telegram.fileMessage({ from: alice, voice: { file_id: over, file_unique_id: "f", duration: 3000, file_size: 25 * 1024 * 1024 } })
      const second = yield* telegram.awaitChat(alice.id, (messages) => messages.length >= 2)
      expect(second[1]!.text).toContain("Telegram lets bots download files up to 20.0 MB")

      // Telegram did not say the size, and getFile refuses it.
      yield* telegram.fileMessage({ from: alice, audio: { file_id: "nope", file_unique_id: "g", duration: 1, file_name: "song.mp3" } })
      const third = yield* telegram.awaitChat(alice.id, (messages) => messages.length >= 3)
      expect(third[2]!.text).toBe("song.mp3 could not be fetched from Telegram (Bad Request: invalid file_id)")
      expect(yield* agent.inbox.size).toBe(0)
      expect(yield* model.modelRequests).toEqual([])
      expect((yield* telegram.calls("download")).length).toBe(0)
      expect(Option.isSome(yield* agent.inbox.cursor("telegram:offset"))).toBe(true)
      yield* agent.stop
    }))
})

describe("Telegram files out", () => {
  it.scopedLive("an image goes as sendPhoto, anything else (an SVG too) as sendDocument, multipart with its name and caption", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model), telegram)
      yield* telegram.awaitCalls("getUpdates", 1)
      const channel = Option.getOrThrow(yield* agent.channels.get("telegram"))
      const image = yield* png(16)
      const svg = new TextEncoder().encode("<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>")
      yield* channel.sendFile("42", { name: "chart.png", bytes: image, mediaType: "image/png" }, "the chart")
      yield* channel.sendFile("42", { name: "logo.svg", bytes: svg, mediaType: "text/plain" }, "")
      const uploads = yield* telegram.awaitUploads(2)
      expect(uploads.map(({ bytes: _, ...rest }) => rest)).toEqual([
        { method: "sendPhoto", chatId: "42", name: "chart.png", mediaType: "image/png", caption: "the chart" },
        { method: "sendDocument", chatId: "42", name: "logo.svg", mediaType: "text/plain", caption: undefined }
      ])
      expect(uploads[0]!.bytes).toEqual(image)
      expect(uploads[1]!.bytes).toEqual(svg)
      yield* agent.stop
    }))
})
