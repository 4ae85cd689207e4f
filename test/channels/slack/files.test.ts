import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import * as FakeSlack from "../../support/fakeSlack.js"
import { advanceUntil, agentFolder, awaitReply, pairUser, startSlackAgent, textOf } from "./harness.js"

// Files from Slack (file_share in a DM: files.info when the event carries only the id, the private download URL with
// the bot token) reach the model as stored files; the message tool's `file` goes up with upload v2. What cannot be
// taken is said in the DM, the event is acknowledged, and the agent goes on serving. The bot token only ever goes to
// Slack: a download URL elsewhere is refused before any request.

const sha = (bytes: Uint8Array) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")
const text = (value: string) => new TextEncoder().encode(value)

/** A said-in-the-DM refusal (or any bot post) whose text contains `part`. */
const awaitPost = (slack: FakeSlack.FakeSlack, part: string) =>
  advanceUntil(slack.awaitCall("chat.postMessage", (call) => textOf(call).includes(part))).pipe(Effect.map(textOf))

/** A plain HTTP server on 127.0.0.1 that records every request made to it: where a token must never arrive. */
const sink = Effect.acquireRelease(
  Effect.async<{ readonly server: NodeHttp.Server; readonly seen: Array<string> }>((resume) => {
    const seen: Array<string> = []
    const server = NodeHttp.createServer((request, response) => {
      seen.push(`${request.method} ${request.url} ${request.headers.authorization ?? ""}`)
      response.writeHead(200, { "content-type": "application/octet-stream" })
      response.end("bytes")
    })
    server.listen({ host: "127.0.0.1", port: 0 }, () => resume(Effect.succeed({ server, seen })))
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ seen, server }) => ({ seen, port: (server.address() as NodeNet.AddressInfo).port })))

describe("Slack files in", () => {
  it.scoped("a file shared in a DM (whole, or only its id: files.info) is downloaded with the bot token, stored, linked and reaches the model", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const dir = agentFolder(model)
      const agent = yield* startSlackAgent({ dir, slack })
      yield* pairUser(agent.pairings, "U1")
      yield* slack.awaitConnections(1)
      yield* model.reply(FakeReply.text("Two lists."))
      const groceries = text("oat milk\nlentils\n")
      const chores = text("fix the tap\n")
      const whole = yield* slack.addFile(groceries, { name: "groceries.txt", mimetype: "text/plain" })
      const partial = yield* slack.addFile(chores, { name: "chores.txt", mimetype: "text/plain" })
      const sent = yield* slack.fileShare("U1", [whole, { id: partial.id, file_access: "check_file_info" }], "my lists")
      yield* awaitReply(slack, "Two lists.")
      yield* slack.awaitAck(sent.envelopeId)
      const [request] = yield* model.modelRequests
      const body = JSON.stringify(request!.body)
      expect(body).toContain("my lists")
      expect(body).toContain("lentils")
      expect(body).toContain("fix the tap")
      expect((yield* slack.callsOf("files.info")).map((call) => call.body["file"])).toEqual([partial.id])
      const downloads = yield* slack.callsOf("download")
      expect(downloads.map((call) => call.token)).toEqual([slack.botToken, slack.botToken])
      for (const bytes of [groceries, chores]) expect(NodeFs.readFileSync(NodePath.join(dir, ".kern/media", sha(bytes)))).toEqual(Buffer.from(bytes))
      const links = (yield* agent.sql`SELECT media_id, conversation_id FROM media_links ORDER BY media_id`) as ReadonlyArray<{ mediaId: string; conversationId: string }>
      expect(links.map((row) => row.mediaId).sort()).toEqual([`med_${sha(groceries).slice(0, 24)}`, `med_${sha(chores).slice(0, 24)}`].sort())
      expect(new Set(links.map((row) => row.conversationId)).size).toBe(1)
      expect(links[0]!.conversationId).not.toBe("main")
    }))

  it.scoped("too large (said, or found while downloading), not downloadable (external), HTML instead of bytes, a download rate-limited past its waits: each a clear reply, acknowledged, nothing queued; a wrong mimetype is judged by the bytes", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model, { media: { maxFileBytes: 1000 } }), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* slack.awaitConnections(1)

      const said = yield* slack.addFile(new Uint8Array(10), { name: "movie.mp4", size: 5000 })
      const a = yield* slack.fileShare("U1", [said])
      expect(yield* awaitPost(slack, "movie.mp4")).toBe("movie.mp4 is 5000 bytes; files over 1000 bytes are not taken (config media.maxFileBytes)")
      yield* slack.awaitAck(a.envelopeId)

      // Slack said nothing of its size: the download stops at the cap.
      const unsized = yield* slack.addFile(new Uint8Array(5000).fill(1), { name: "dump.bin" })
      const b = yield* slack.fileShare("U1", [{ ...unsized, size: undefined }])
      expect(yield* awaitPost(slack, "dump.bin")).toContain("dump.bin is over 1000 bytes; files over that are not taken")
      yield* slack.awaitAck(b.envelopeId)

      const external = yield* slack.addFile(text("x"), { name: "plan.gdoc", mode: "external" })
      yield* slack.fileShare("U1", [external])
      expect(yield* awaitPost(slack, "plan.gdoc")).toBe("plan.gdoc is not a file kern can download from Slack (external)")

      const page = yield* slack.addFile(text("%PDF-1.4 not really"), { name: "scan.pdf", mimetype: "application/pdf" })
      yield* slack.failDownloads({ _tag: "Html" })
      yield* slack.fileShare("U1", [page])
      expect(yield* awaitPost(slack, "scan.pdf")).toContain("Slack answered with a web page (does the app have the files:read scope?)")

      const limited = yield* slack.addFile(text("hello"), { name: "hello.txt", mimetype: "text/plain" })
      yield* slack.failDownloads(...Array.from({ length: 6 }, () => ({ _tag: "RateLimited" as const, retryAfterSeconds: 2 })))
      yield* slack.fileShare("U1", [limited])
      expect(yield* awaitPost(slack, "hello.txt")).toBe("hello.txt was not taken: Slack is limiting downloads right now; send it again in a few minutes")
      // The first try and five waits of its Retry-After.
      expect((yield* slack.callsOf("download")).filter((call) => call.body["file"] === limited.id).length).toBe(6)

      expect(yield* agent.inbox.size).toBe(0)
      expect(yield* model.modelRequests).toEqual([])

      // Named chart.png and called an image by Slack, the bytes are text: kern takes them as what they are.
      yield* model.reply(FakeReply.text("Still here, and that was text."))
      const liar = yield* slack.addFile(text("not a picture at all"), { name: "chart.png", mimetype: "image/png" })
      yield* slack.fileShare("U1", [liar], "see chart")
      yield* awaitReply(slack, "Still here, and that was text.")
      const [request] = yield* model.modelRequests
      expect(JSON.stringify(request!.body)).toContain("not a picture at all")
      expect(request!.media).toEqual([])
    }))

  it.scoped("a download rate-limited once is waited out for its Retry-After on the Clock, then taken", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* slack.awaitConnections(1)
      yield* model.reply(FakeReply.text("Got the notes."))
      const notes = yield* slack.addFile(text("standup at nine\n"), { name: "notes.txt", mimetype: "text/plain" })
      yield* slack.failDownloads({ _tag: "RateLimited", retryAfterSeconds: 30 })
      yield* slack.fileShare("U1", [notes])
      yield* awaitReply(slack, "Got the notes.")
      const downloads = yield* slack.callsOf("download")
      expect(downloads.length).toBe(2)
      expect(downloads[1]!.atMs - downloads[0]!.atMs).toBeGreaterThanOrEqual(30_000)
      expect(JSON.stringify((yield* model.modelRequests)[0]!.body)).toContain("standup at nine")
    }))

  it.scoped("corpus: download URLs that are not Slack's (another port, another host, http, userinfo tricks, a redirect away) never receive the token; each is refused in words and the agent goes on", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const elsewhere = yield* sink
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* slack.awaitConnections(1)
      const other = `127.0.0.1:${elsewhere.port}`
      const corpus: ReadonlyArray<readonly [string, string]> = [
        [`http://${other}/files-pri/T1-F9/download/a.txt`, `not on Slack (${other})`],
        [`http://localhost:${slack.port}/files-pri/T1-F9/download/a.txt`, `not on Slack (localhost:${slack.port})`],
        [`https://127.0.0.1:${slack.port}/files-pri/T1-F9/download/a.txt`, "not on Slack"],
        [`http://files.slack.com/files-pri/T1-F9/download/a.txt`, "not on Slack (files.slack.com)"],
        [`http://slack.com/files-pri/T1-F9/download/a.txt`, "not on Slack (slack.com)"],
        [`https://slack.com.evil.test/files-pri/T1-F9/a.txt`, "not on Slack (slack.com.evil.test)"],
        [`https://evilslack.com/a.txt`, "not on Slack (evilslack.com)"],
        [`https://files.slack.com@${other}/a.txt`, `not on Slack (${other})`],
        [`http://127.0.0.1:${slack.port}@${other}/a.txt`, `not on Slack (${other})`],
        ["file:///etc/passwd", "not on Slack"],
        ["javascript:alert(1)", "not on Slack"],
        ["not a url", "the file's download URL is not a URL"],
        ["", "the file's download URL is not a URL"]
      ]
      let n = 0
      for (const [url, expected] of corpus) {
        const name = `c${++n}.txt`
        yield* slack.fileShare("U1", [{ id: `FX${n}`, name, mimetype: "text/plain", size: 5, mode: "hosted", url_private_download: url }])
        const reply = yield* awaitPost(slack, `${name} `)
        expect(reply, url).toContain(`${name} could not be downloaded: `)
        expect(reply, url).toContain(expected)
      }
      // Slack's own URL answering with a redirect elsewhere: not followed.
      const real = yield* slack.addFile(text("hello"), { name: "moved.txt", mimetype: "text/plain" })
      yield* slack.failDownloads({ _tag: "Redirect", location: `http://${other}/stolen` })
      yield* slack.fileShare("U1", [real])
      expect(yield* awaitPost(slack, "moved.txt")).toBe("moved.txt could not be downloaded from Slack (HTTP 302)")
      expect(elsewhere.seen).toEqual([])
      // No token in anything said back, and only Slack's own download URL was ever fetched.
      for (const post of yield* slack.callsOf("chat.postMessage")) expect(textOf(post)).not.toContain(slack.botToken)
      expect((yield* slack.callsOf("download")).length).toBe(1)
      expect(yield* agent.inbox.size).toBe(0)
      yield* model.reply(FakeReply.text("Still serving."))
      yield* slack.dm("U1", "you there?")
      yield* awaitReply(slack, "Still serving.")
    }))
})

describe("Slack files out", () => {
  it.scoped("the message tool's file goes up with upload v2 into the DM the turn answers, its text as the comment", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const dir = agentFolder(model)
      NodeFs.mkdirSync(NodePath.join(dir, "reports"), { recursive: true })
      const csv = "day,count\nmon,3\n"
      NodeFs.writeFileSync(NodePath.join(dir, "reports", "week.csv"), csv)
      const agent = yield* startSlackAgent({ dir, slack })
      yield* pairUser(agent.pairings, "U1", "operator")
      yield* slack.awaitConnections(1)
      yield* model.reply(
        FakeReply.toolCalls([{ id: "f1", name: "message", args: { text: "the *week*", file: "reports/week.csv" } }]),
        FakeReply.text("Sent it.")
      )
      yield* slack.dm("U1", "send me the week")
      const [upload] = yield* advanceUntil(slack.awaitUploads(1))
      expect({ ...upload!, bytes: new TextDecoder().decode(upload!.bytes) }).toEqual({
        fileId: upload!.fileId,
        filename: "week.csv",
        title: "week.csv",
        bytes: csv,
        channel: "DU1",
        threadTs: undefined,
        // The caption is markdown made mrkdwn, as replies are.
        initialComment: "the _week_"
      })
      // The bytes went to the URL Slack gave, without the bot token (the URL is its own authorization).
      const posts = yield* slack.callsOf("upload")
      expect(posts.map((call) => call.token)).toEqual([""])
      expect((yield* slack.callsOf("files.getUploadURLExternal"))[0]!.body).toEqual({ filename: "week.csv", length: String(csv.length) })
      yield* awaitReply(slack, "Sent it.")
      expect((yield* slack.uploads).length).toBe(1)
    }))
})
