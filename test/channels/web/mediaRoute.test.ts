import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import sharp from "sharp"
import { linkMedia } from "../../../src/media/mediaLinks.js"
import { MediaStore } from "../../../src/media/MediaStore.js"
import { servedMedia } from "../../../src/media/servedMedia.js"
import { mayView } from "../../../src/channels/web/mediaAccess.js"
import { makePdf } from "../../support/pdfFiles.js"
import { bearer, request, startServer, token } from "./harness.js"
import { rawRequest } from "./rawHttp.js"

// GET /media/<id>: the bytes of a file a conversation the caller sees holds, with the stored type; shown in place only
// when a raster image; never a script's document. Every attack below gets the same 404 (or the gate's 400, or 401),
// and never a byte of any file.

const json = { ...bearer, "content-type": "application/json" }
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")
const sha = (bytes: Uint8Array) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")
const idOf = (bytes: Uint8Array) => `med_${sha(bytes).slice(0, 24)}`
const utf8 = (text: string) => new TextEncoder().encode(text)

/** Sends one message with `files` and answers their media ids (the session's Attachment ids: the bytes' sha256). */
const sendFiles = (base: string, files: ReadonlyArray<readonly [string, Uint8Array]>) =>
  Effect.gen(function*() {
    const answer = yield* request(`${base}/message`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ text: "files", files: files.map(([name, bytes]) => ({ name, data: b64(bytes) })) })
    })
    expect(answer.status).toBe(202)
    return files.map(([, bytes]) => idOf(bytes))
  })

describe("GET /media/<id>", () => {
  it.live("serves a linked file with its stored type; raster images inline, everything else a download; no script ever runs", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* startServer({ config: { recall: false } })
      const png = new Uint8Array(yield* Effect.promise(() => sharp({ create: { width: 4, height: 3, channels: 3, background: "#a00" } }).png().toBuffer()))
      const pdf = makePdf(["The lease"])
      const htmlAsPng = utf8(`<html><body><script>fetch("/status")</script>hi</body></html>`)
      const svg = utf8(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>`)
      const [pngId, pdfId, htmlId, svgId] = yield* sendFiles(base, [
        ["photo.png", png],
        ["lease.pdf", pdf],
        ["cute.png", htmlAsPng],
        ["logo.svg", svg]
      ])
      const get = (id: string | undefined, headers: Record<string, string> = bearer) => request(`${base}/media/${id}`, { headers })

      const image = yield* get(pngId)
      expect(image.status).toBe(200)
      expect(image.headers.get("content-type")).toBe("image/png")
      expect(image.headers.get("content-disposition")).toBe("inline")
      expect(image.headers.get("x-content-type-options")).toBe("nosniff")
      const policy = image.headers.get("content-security-policy") ?? ""
      expect(policy).toContain("default-src 'none'")
      expect(policy).toContain("script-src 'none'")
      expect(policy).toContain("sandbox")
      const bytes = yield* Effect.promise(() => fetch(`${base}/media/${pngId}`, { headers: bearer }).then((r) => r.arrayBuffer()))
      expect(Buffer.from(bytes).equals(Buffer.from(png))).toBe(true)

      const lease = yield* get(pdfId)
      expect(lease.status).toBe(200)
      expect(lease.headers.get("content-type")).toBe("application/pdf")
      expect(lease.headers.get("content-disposition")).toBe("attachment")

      // Named .png, sniffed from its bytes: text, downloaded, never an image and never a page.
      for (const id of [htmlId, svgId]) {
        const answer = yield* get(id)
        expect(answer.status).toBe(200)
        expect(answer.headers.get("content-type")).toBe("text/plain")
        expect(answer.headers.get("content-disposition")).toBe("attachment")
        expect(answer.headers.get("content-security-policy")).toContain("script-src 'none'")
      }

      // The type is the stored one whatever the request asks for.
      const asked = yield* get(htmlId, { ...bearer, accept: "text/html", "content-type": "text/html" })
      expect(asked.headers.get("content-type")).toBe("text/plain")
      const query = yield* request(`${base}/media/${htmlId}?type=text/html&download=0`, { headers: bearer })
      expect(query.headers.get("content-type")).toBe("text/plain")
      expect(query.headers.get("content-disposition")).toBe("attachment")

      // Range is not taken: the whole file, never a slice of another.
      const ranged = yield* get(pngId, { ...bearer, range: "bytes=0-3" })
      expect(ranged.status).toBe(200)
      expect(ranged.headers.get("content-length")).toBe(String(png.length))

      // No credential, a wrong one, or one in the URL: 401, and no bytes.
      for (const headers of [{}, { authorization: "Bearer wrong" }, { cookie: "kern_session=forged" }]) {
        const refused = yield* get(pngId, headers)
        expect(refused.status).toBe(401)
        expect(refused.text).not.toContain("PNG")
      }
      expect((yield* request(`${base}/media/${pngId}?token=${token}`)).status).toBe(401)
    })), 120_000)

  it.live("the attack corpus: path ids, traversal, foreign ids, unlinked and pruned files are all refused without a byte", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, port, dir, context } = yield* startServer({ config: { recall: false } })
      const secret = utf8("the operator's file: ZEBRA-SECRET-CONTENT")
      const [linkedId] = yield* sendFiles(base, [["notes.txt", secret]])
      const media = Context.get(context, MediaStore)
      const sql = Context.get(context, SqlClient.SqlClient)

      // Stored but linked to no conversation (a file the message tool stored for a message never sent).
      const loose = utf8("unlinked: GIRAFFE-CONTENT")
      const unlinked = yield* media.ingest({ name: "loose.txt", bytes: loose })
      // Linked, then its bytes pruned from the disk; and one whose row is gone too.
      const pruned = utf8("pruned: OKAPI-CONTENT")
      const gone = utf8("gone: TAPIR-CONTENT")
      const [prunedId, goneId] = yield* sendFiles(base, [["p.txt", pruned], ["g.txt", gone]])
      NodeFs.rmSync(NodePath.join(dir, ".kern", "media", sha(pruned)))
      yield* sql`DELETE FROM media WHERE media_id = ${goneId!}`

      const host = `Host: 127.0.0.1:${port}`
      const auth = `Authorization: Bearer ${token}`
      const sha256 = sha(secret)
      const targets = [
        "/media/../kern.db",
        "/media/..%2fkern.db",
        "/media/%2e%2e%2f%2e%2e%2fconfig.json",
        "/media/%2E%2E%2Fconfig.json",
        `/media/med_..%2f..%2fconfig.json`,
        `/media/${linkedId}%2f..%2f..%2fconfig.json`,
        `/media/${linkedId}/../../config.json`,
        `/media/${sha256}`,
        `/media/..%2fmedia%2f${sha256}`,
        `/media/%2Fetc%2Fpasswd`,
        `/media//etc/passwd`,
        `/media/${encodeURIComponent(NodePath.join(dir, ".kern", "media", sha256))}`,
        `/media/med_${sha256.slice(0, 24).toUpperCase()}`,
        `/media/med_${sha256.slice(0, 23)}`,
        `/media/med_${sha256.slice(0, 24)}0`,
        `/media/${linkedId}%00`,
        `/media/${linkedId}.txt`,
        `/media/${unlinked.id}`,
        `/media/${prunedId}`,
        `/media/${goneId}`,
        `/media/med_${"0".repeat(24)}`,
        "/media/",
        "/media"
      ]
      for (const target of targets) {
        for (const method of ["GET", "HEAD"]) {
          const answer = yield* rawRequest(port, { method, target, headers: [host, auth, "Range: bytes=0-"] })
          expect([400, 404], `${method} ${target}`).toContain(answer.status)
          for (const word of ["ZEBRA", "GIRAFFE", "OKAPI", "TAPIR", "root:"]) expect(answer.body, `${method} ${target}`).not.toContain(word)
        }
        const anonymous = yield* rawRequest(port, { target, headers: [host] })
        expect([400, 401], target).toContain(anonymous.status)
      }
      // An unlinked, pruned or unknown id reads exactly as one that is not there.
      const answers = yield* Effect.forEach([unlinked.id, prunedId, goneId, `med_${"0".repeat(24)}`], (id) =>
        request(`${base}/media/${id}`, { headers: bearer }))
      for (const answer of answers) expect(answer.status).toBe(404)
      expect(new Set(answers.map((a) => (a.json as { error: string }).error.replace(/med_[0-9a-f]{24}/, "ID"))).size).toBe(1)
      // And the linked one is served.
      const served = yield* request(`${base}/media/${linkedId}`, { headers: bearer })
      expect(served.status).toBe(200)
      expect(served.text).toContain("ZEBRA")
    })), 120_000)

  it.live("a viewer confined to one conversation reads that one's files, never the operator's nor another person's", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, context } = yield* startServer({ config: { recall: false } })
      const sql = Context.get(context, SqlClient.SqlClient)
      const media = Context.get(context, MediaStore)
      const [operatorId] = yield* sendFiles(base, [["mine.txt", utf8("the operator's")]])
      const theirs = yield* media.ingest({ name: "theirs.txt", bytes: utf8("a friend's") })
      const friend = "telegram:dm:555"
      yield* linkMedia([theirs.id], friend).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      const stored = (id: string) =>
        servedMedia(id).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.map((s) => s?.conversations ?? []))
      const operatorLinks = yield* stored(operatorId!)
      const friendLinks = yield* stored(theirs.id)
      const confined = { _tag: "conversation", conversationId: friend } as const
      expect(mayView(confined, operatorLinks)).toBe(false)
      expect(mayView(confined, friendLinks)).toBe(true)
      expect(mayView({ _tag: "conversation", conversationId: "slack:dm:U9" }, friendLinks)).toBe(false)
      // The operator sees every conversation (as /history does): both; a file linked to none is nobody's.
      expect(mayView({ _tag: "operator" }, operatorLinks)).toBe(true)
      expect(mayView({ _tag: "operator" }, friendLinks)).toBe(true)
      expect(mayView({ _tag: "operator" }, [])).toBe(false)
    })), 120_000)
})
