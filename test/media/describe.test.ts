import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Scope } from "effect"
import * as NodePath from "node:path"
import sharp from "sharp"
import { MediaStore } from "../../src/media/MediaStore.js"
import { transcriptionOffNote } from "../../src/model/Transcription.js"
import * as FakeModelServer from "../support/fakeModelServer.js"
import type { RecordedTranscription } from "../support/fakeModelServer.js"
import { oggVoice } from "../support/mediaFiles.js"
import { makePdf } from "../support/pdfFiles.js"
import { buildAgentCore, testAgentDir } from "../support/testAgentDir.js"

// What kern reads out of a file when it is stored: an image's size, a PDF's text, a voice note's transcript; what it
// cannot read becomes a note, and the file is still stored.

const agentDir = (config: Record<string, unknown>) => testAgentDir(config)

const started = (dir: string, scope: Scope.Scope) =>
  Effect.map(buildAgentCore(dir, scope, "sk-test-transcribe-key"), (context) => Context.get(context, MediaStore))

const jpeg = () =>
  Effect.promise(() => sharp({ create: { width: 40, height: 30, channels: 3, background: "#0a0" } }).jpeg().toBuffer())


describe("media descriptions", () => {
  it.scopedLive("an image gets its size; a truncated one is a file with a note", () =>
    Effect.gen(function*() {
      const media = yield* started(agentDir({}), yield* Effect.scope)
      const image = new Uint8Array(yield* jpeg())
      expect(yield* media.ingest({ name: "receipt.jpg", bytes: image }))
        .toMatchObject({ kind: "image", mediaType: "image/jpeg", width: 40, height: 30 })
      const truncated = yield* media.ingest({ name: "cut.jpg", bytes: image.slice(0, Math.floor(image.length / 2)) })
      expect(truncated).toMatchObject({ kind: "file", mediaType: "image/jpeg" })
      expect(truncated.note).toMatch(/^could not be read as an image/)
      expect(truncated.width).toBeUndefined()
    }))

  it.scopedLive("a PDF gets its page-numbered text, or a note when it has none or is not readable", () =>
    Effect.gen(function*() {
      const media = yield* started(agentDir({}), yield* Effect.scope)
      const pdf = yield* media.ingest({ name: "contract.pdf", bytes: makePdf(["Tenant: Ada Lovelace", "Rent: 900 per month"]) })
      expect(pdf).toMatchObject({ kind: "pdf", mediaType: "application/pdf", pages: 2 })
      expect(pdf.text).toBe("--- page 1 ---\nTenant: Ada Lovelace\n\n--- page 2 ---\nRent: 900 per month\n")
      expect(pdf.note).toBeUndefined()
      const scan = yield* media.ingest({ name: "scan.pdf", bytes: makePdf([undefined]) })
      expect(scan).toMatchObject({ kind: "pdf", pages: 1 })
      expect(scan.note).toContain("no text layer")
      expect(scan.text).toBeUndefined()
      const broken = yield* media.ingest({ name: "broken.pdf", bytes: makePdf(["x"]).slice(0, 30) })
      expect(broken.note).toMatch(/^its text could not be read/)
    }))

  it.scopedLive("a voice note is transcribed at the provider's /audio/transcriptions; a failure is a note", () =>
    Effect.gen(function*() {
      const server = yield* FakeModelServer.make
      const media = yield* started(
        agentDir({ provider: "openrouter", baseURL: server.baseURL, transcriptionModel: "whisper-1" }),
        yield* Effect.scope
      )
      yield* server.transcriptions({ text: "Buy oat milk on the way home" })
      const voice = oggVoice()
      const note = yield* media.ingest({ name: "voice.ogg", bytes: voice })
      expect(note.note).toBeUndefined()
      expect(note).toMatchObject({ kind: "audio", mediaType: "audio/ogg", text: "Buy oat milk on the way home" })
      const [request] = (yield* server.requests).filter((r) => r.path === "/audio/transcriptions")
      expect(request?.headers["authorization"]).toBe("Bearer sk-test-transcribe-key")
      const form = request?.body as RecordedTranscription
      expect(form.fields).toEqual({ model: "whisper-1" })
      expect(form.file?.name).toBe("voice.ogg")
      expect(form.file?.type).toBe("audio/ogg")
      expect(Array.from(form.file?.bytes ?? [])).toEqual(Array.from(voice))

      const again = (bytes: Uint8Array) => media.ingest({ name: "again.ogg", bytes })
      yield* server.transcriptions({ status: 429 })
      const limited = yield* again(voice.map((b, i) => (i === 100 ? 2 : b)))
      expect(limited).toMatchObject({ kind: "audio" })
      expect(limited.text).toBeUndefined()
      expect(limited.note).toContain("not transcribed")
      expect(limited.note).toContain("HTTP 429")
      expect(limited.note).toContain("Rate limit exceeded")
      expect(limited.note).not.toContain("sk-test")
      yield* server.transcriptions({ status: 502, html: true })
      const html = yield* again(voice.map((b, i) => (i === 100 ? 3 : b)))
      expect(html.note).toContain("HTTP 502 (an HTML page instead of JSON)")
    }))

  it.scopedLive("without transcriptionModel a voice note is stored with a note saying how to have it transcribed", () =>
    Effect.gen(function*() {
      const server = yield* FakeModelServer.make
      const media = yield* started(agentDir({ baseURL: server.baseURL }), yield* Effect.scope)
      const stored = yield* media.ingest({ name: "voice.ogg", bytes: oggVoice() })
      expect(stored).toMatchObject({ kind: "audio", note: transcriptionOffNote })
      expect(stored.note).toContain("transcriptionModel")
      expect((yield* server.requests).filter((r) => r.path === "/audio/transcriptions")).toEqual([])
    }))
})
