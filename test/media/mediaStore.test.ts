import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import sharp from "sharp"
import { MediaStore } from "../../src/media/MediaStore.js"
import { isLinked, linkMedia } from "../../src/media/mediaLinks.js"
import { servedMedia } from "../../src/media/servedMedia.js"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { decodeSessionLine } from "../../src/session/lineDecode.js"
import { encodeSessionLine } from "../../src/session/lineEncode.js"
import { UserMessage } from "../../src/session/messages.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { agentDatabaseConfig, databases, type TestDatabase } from "../support/databases.js"
import { buildAgentCore, testAgentDir } from "../support/testAgentDir.js"

// Files that come with messages are stored once, by content, with their type read from the bytes; a message carries
// references to them through the inbox, a restart and the session, never the bytes.

const agentDir = (database: TestDatabase, media?: object) =>
  Effect.map(agentDatabaseConfig(database), (config) => testAgentDir({ ...config, ...(media === undefined ? {} : { media }) }))

const started = buildAgentCore

const png = () =>
  Effect.promise(() => sharp({ create: { width: 4, height: 3, channels: 3, background: "#f00" } }).png().toBuffer())

describe.each(databases)("media store, kern.db on $dialect", (database) => {
  it.scopedLive("sniffs from the bytes, stores once and privately, and refuses what is over the caps", () =>
    Effect.gen(function*() {
      const dir = yield* agentDir(database, { maxFileBytes: 64 * 1024, maxTurnBytes: 100 * 1024 })
      const context = yield* started(dir, yield* Effect.scope)
      const media = Context.get(context, MediaStore)

      const image = new Uint8Array(yield* png())
      // The name says text; the bytes are a PNG.
      const stored = yield* media.ingest({ name: "notes.txt", bytes: image })
      expect(stored).toMatchObject({ name: "notes.txt", mediaType: "image/png", kind: "image", bytes: image.length })
      expect(stored.id).toMatch(/^med_[0-9a-f]{24}$/)
      expect(yield* media.ingest({ name: "again.png", bytes: image })).toMatchObject({ id: stored.id })
      expect(Array.from(yield* media.read(stored.id))).toEqual(Array.from(image))
      const files = NodeFs.readdirSync(NodePath.join(dir, ".kern", "media"))
      expect(files).toHaveLength(1)
      expect(NodeFs.statSync(NodePath.join(dir, ".kern", "media", files[0]!)).mode & 0o777).toBe(0o600)

      // An SVG with a script is text to kern, whatever its name says; a JPEG name on it changes nothing.
      const svg = new TextEncoder().encode(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
      expect(yield* media.ingest({ name: "photo.jpg", bytes: svg })).toMatchObject({ kind: "text", mediaType: "text/plain" })
      // A truncated JPEG is still sniffed as one (its header); bytes that are nothing known are an opaque file.
      expect(yield* media.ingest({ name: "x.bin", bytes: new Uint8Array([0, 159, 146, 150, 1, 2]) }))
        .toMatchObject({ kind: "file", mediaType: "application/octet-stream" })
      // A control character in a sender's name is not carried into what is shown.
      expect((yield* media.ingest({ name: "a\nb\u0007.txt", bytes: new TextEncoder().encode("hi") })).name).toBe("a b .txt")

      const big = yield* Effect.flip(media.ingest({ name: "big.bin", bytes: new Uint8Array(65 * 1024).fill(7) }))
      expect(big).toMatchObject({ _tag: "MediaRejected", reason: "too-large" })
      expect(big.message).toContain("big.bin is 66560 bytes")
      expect(big.message).toContain("media.maxFileBytes")
      expect(yield* Effect.flip(media.ingest({ name: "empty", bytes: new Uint8Array() }))).toMatchObject({ reason: "empty" })
      const total = yield* Effect.flip(media.checkTotal([{ bytes: 60 * 1024 }, { bytes: 60 * 1024 }]))
      expect(total).toMatchObject({ reason: "turn-too-large" })
      expect(total.message).toContain("media.maxTurnBytes")
      yield* media.checkTotal([{ bytes: 60 * 1024 }])
      expect(yield* Effect.flip(media.read("med_000000000000000000000000"))).toMatchObject({ _tag: "MediaNotFound" })
    }))

  it.scopedLive("a message's attachments survive the inbox, a restart and the session line", () =>
    Effect.gen(function*() {
      const dir = yield* agentDir(database)
      const first = yield* Scope.make()
      const context = yield* started(dir, first)
      const attachment = yield* Context.get(context, MediaStore).ingest({ name: "dot.png", bytes: new Uint8Array(yield* png()) })
      yield* Context.get(context, AgentRuntime).submit({
        interface: "http",
        channel: "web",
        userId: "operator",
        text: "what is this?",
        attachments: [attachment]
      })
      yield* Scope.close(first, Exit.void)

      // Not answered before the process ended: the next start replays it with its attachment.
      const second = yield* Scope.make()
      const again = yield* started(dir, second)
      const replayed = yield* Context.get(again, MessageQueue).next
      expect(replayed.text).toBe("what is this?")
      expect(replayed.attachments).toEqual([attachment])
      yield* Scope.close(second, Exit.void)

      const line = new UserMessage({ text: "what is this?", attachments: [attachment], at: "2026-11-27T10:00:00.000Z" })
      const decoded = decodeSessionLine(encodeSessionLine(line))
      expect(decoded._tag).toBe("Line")
      expect(decoded._tag === "Line" ? decoded.line : undefined).toEqual(line)
    }))

  it.scopedLive("a stored file's links: the conversations it belongs to, once each; an unknown id names nothing", () =>
    Effect.gen(function*() {
      const context = yield* started(yield* agentDir(database), yield* Effect.scope)
      const sql = Context.get(context, SqlClient.SqlClient)
      const stored = yield* Context.get(context, MediaStore).ingest({ name: "dot.png", bytes: new Uint8Array(yield* png()) })
      const withSql = Effect.provideService(SqlClient.SqlClient, sql)
      expect(yield* servedMedia(stored.id).pipe(withSql)).toEqual({ mediaType: "image/png", conversations: [] })
      yield* linkMedia([stored.id], "telegram:42").pipe(withSql)
      yield* linkMedia([stored.id], "telegram:42").pipe(withSql)
      yield* linkMedia([stored.id], "web:operator").pipe(withSql)
      const served = yield* servedMedia(stored.id).pipe(withSql)
      expect([...served!.conversations].sort()).toEqual(["telegram:42", "web:operator"])
      expect(yield* isLinked(stored.id, "telegram:42").pipe(withSql)).toBe(true)
      expect(yield* isLinked(stored.id, "slack:C1").pipe(withSql)).toBe(false)
      expect(yield* servedMedia("med_000000000000000000000000").pipe(withSql)).toBeUndefined()
    }))
})
