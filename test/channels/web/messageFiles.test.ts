import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import sharp from "sharp"
import { FakeReply, type RecordedTranscription } from "../../support/fakeModelServer.js"
import { oggVoice } from "../../support/mediaFiles.js"
import { makePdf } from "../../support/pdfFiles.js"
import { bearer, request, startServer } from "./harness.js"

// POST /message takes files (JSON, base64): each is stored and read when the message is accepted; a file kern will
// not take is a 4xx naming it, with nothing queued; whatever came, the agent answers the next message.

const json = { ...bearer, "content-type": "application/json" }
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")
const post = (base: string, body: unknown, headers: Record<string, string> = json) =>
  request(`${base}/message`, { method: "POST", headers, body: JSON.stringify(body) })

const jpeg = () =>
  Effect.promise(() => sharp({ create: { width: 64, height: 48, channels: 3, background: "#123" } }).jpeg().toBuffer())
const png = () => Effect.promise(() => sharp({ create: { width: 5, height: 5, channels: 4, background: "#fff0" } }).png().toBuffer())

/** A zip of one stored file, as `zip` writes it (its local header is what file-type sniffs). */
const zip = () => {
  const bytes = new Uint8Array(120)
  bytes.set([0x50, 0x4b, 0x03, 0x04, 0x0a, 0, 0, 0, 0, 0], 0)
  bytes.set(new TextEncoder().encode("a.txt"), 30)
  bytes[26] = 5
  return bytes
}


describe("POST /message with files", () => {
  it.live("the bad-file corpus: each ends in a clear answer, and the agent still answers the next message", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, client, dir, model } = yield* startServer({ config: { recall: false } })
      const image = new Uint8Array(yield* jpeg())

      // Taken, with what kern could read of them.
      const taken: ReadonlyArray<readonly [string, Uint8Array]> = [
        ["truncated.jpg", image.slice(0, Math.floor(image.length / 2))],
        ["bomb.pdf", makePdf(["boom"], { repeat: 3000 })],
        ["photo.txt", new Uint8Array(yield* png())],
        ["drawing.svg", new TextEncoder().encode(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)],
        ["archive.zip", zip()]
      ]
      for (const [name, bytes] of taken) {
        const answer = yield* post(base, { text: `here is ${name}`, files: [{ name, data: b64(bytes) }] })
        expect(answer.status, name).toBe(202)
      }

      // Refused, nothing queued: named, with the limit.
      const empty = yield* post(base, { text: "empty", files: [{ name: "empty.txt", data: "" }] })
      expect(empty.status).toBe(400)
      expect(empty.json).toEqual({ error: "empty.txt is empty", field: "files" })
      const big = yield* post(base, { text: "big", files: [{ name: "video.mp4", data: b64(new Uint8Array(50 * 1024 * 1024)) }] })
      expect(big.status).toBe(413)
      expect(big.json).toMatchObject({ field: "files" })
      expect((big.json as { error: string }).error).toBe(
        "video.mp4 is 50.0 MB; files over 20.0 MB are not taken (config media.maxFileBytes)"
      )
      const notBase64 = yield* post(base, { text: "x", files: [{ name: "a.bin", data: "!!!not base64" }] })
      expect(notBase64.status).toBe(400)
      expect(notBase64.json).toMatchObject({ error: "files[0].data: not base64" })
      const unauthorized = yield* post(base, { text: "x", files: [{ name: "a.png", data: b64(image) }] }, {
        "content-type": "application/json"
      })
      expect(unauthorized.status).toBe(401)

      // The queued messages' files, as the session recorded them; then the agent answers the next message.
      yield* model.reply(...taken.map(() => FakeReply.text("seen")), FakeReply.text("still here"))
      const events = yield* client.events()
      const { turnId } = yield* client.send({ text: "are you still there?" })
      const finish = yield* events.pipe(
        Stream.filter((e) => e.type === "finish" && e.turnId === turnId),
        Stream.runHead
      )
      expect(finish._tag === "Some" ? finish.value : undefined).toMatchObject({ reply: "still here" })

      const sessions = NodeFs.readdirSync(NodePath.join(dir, ".kern", "sessions")).filter((n) => n.endsWith(".jsonl"))
      const lines = sessions.flatMap((n) =>
        NodeFs.readFileSync(NodePath.join(dir, ".kern", "sessions", n), "utf8").split("\n").filter((l) => l !== "")
      ).map((l) => JSON.parse(l) as { _tag?: string; text?: string; attachments?: ReadonlyArray<Record<string, unknown>> })
      const files = lines.flatMap((l) => l.attachments ?? [])
      const byName = new Map(files.map((f) => [f["name"], f]))
      expect(byName.get("truncated.jpg")).toMatchObject({ kind: "file", mediaType: "image/jpeg" })
      expect(String(byName.get("truncated.jpg")?.["note"])).toMatch(/^could not be read as an image/)
      expect(byName.get("bomb.pdf")).toMatchObject({ kind: "pdf", pages: 3000 })
      expect(String(byName.get("bomb.pdf")?.["note"])).toMatch(/^text cut after page \d+ of 3000/)
      expect(byName.get("photo.txt")).toMatchObject({ kind: "image", mediaType: "image/png", width: 5, height: 5 })
      expect(byName.get("drawing.svg")).toMatchObject({ kind: "text", mediaType: "text/plain" })
      expect(byName.get("archive.zip")).toMatchObject({ kind: "file", mediaType: "application/zip" })
      // Refused files never reached a session, nor the media store.
      expect(byName.has("empty.txt")).toBe(false)
      expect(byName.has("video.mp4")).toBe(false)
      expect(lines.some((l) => l.text === "big" || l.text === "empty")).toBe(false)
      expect(yield* request(`${base}/health`)).toMatchObject({ status: 200 })
    })), 300_000)

  it.live("a voice note is transcribed end to end and stored with its message; recall finds a word only a PDF holds", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, client, dir, model } = yield* startServer({ config: { transcriptionModel: "whisper-1" } })
      yield* model.transcriptions({ text: "Remember the dentist on Thursday" })
      yield* model.reply(FakeReply.text("noted"), FakeReply.text("read it"))
      const events = yield* client.events()
      const voice = oggVoice()
      const sent = yield* post(base, { text: "", files: [{ name: "voice.ogg", data: b64(voice) }] })
      expect(sent.status).toBe(202)
      const pdf = yield* post(base, {
        text: "the lease",
        files: [{ name: "lease.pdf", data: b64(makePdf(["The landlord is Quetzalcoatl Properties"])) }]
      })
      expect(pdf.status).toBe(202)
      const second = (pdf.json as { turnId: string }).turnId
      yield* events.pipe(Stream.filter((e) => e.type === "finish" && e.turnId === second), Stream.runHead)

      const [transcription] = (yield* model.requests).filter((r) => r.path === "/audio/transcriptions")
      const form = transcription?.body as RecordedTranscription
      expect(form.fields["model"]).toBe("whisper-1")
      expect(Array.from(form.file?.bytes ?? [])).toEqual(Array.from(voice))
      const session = NodeFs.readdirSync(NodePath.join(dir, ".kern", "sessions")).find((n) => n.endsWith(".jsonl")) ?? ""
      const text = NodeFs.readFileSync(NodePath.join(dir, ".kern", "sessions", session), "utf8")
      expect(text).toContain("Remember the dentist on Thursday")
      expect(text).toContain("\"kind\":\"audio\"")
      // The audio itself is in the media store, not the session.
      expect(NodeFs.readdirSync(NodePath.join(dir, ".kern", "media")).length).toBe(2)

      // Recall indexes in the background: wait until a search has hits (at most a minute).
      const hits = (word: string) =>
        Effect.map(
          request(`${base}/recall/search?q=${word}`, { headers: bearer }),
          (answer) => answer.status === 200 ? (answer.json as { hits: ReadonlyArray<{ text: string }> }).hits : []
        )
      const found = (word: string) =>
        Effect.repeat(hits(word), { until: (list) => list.some((hit) => hit.text.includes(word)), schedule: Schedule.spaced("100 millis") }).pipe(
          Effect.timeout("60 seconds"),
          Effect.zipRight(hits(word))
        )
      const lease = yield* found("Quetzalcoatl")
      // The word is only in the PDF's text: the hit is the message it came with.
      expect(lease.map((hit) => hit.text).join("\n")).toContain("[file: lease.pdf]\n--- page 1 ---\nThe landlord is Quetzalcoatl Properties")
      const dentist = yield* found("dentist")
      expect(dentist.map((hit) => hit.text).join("\n")).toContain("[file: voice.ogg]\nRemember the dentist on Thursday")
    })), 300_000)
})
