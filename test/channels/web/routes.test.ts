import { messageBodyLimit } from "../../../src/channels/web/WebServer.js"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Schedule, Schema, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { AgentEvent, type ContextSegmentsResponse, type SegmentsResponse, type SystemPromptResponse } from "../../../src/channels/web/api.js"
import { decodeEvent } from "../../../src/channels/web/ui/wire.js"
import { makeTurnFollower } from "../../../src/channels/web/follow.js"
import { FakeReply } from "../../support/fakeModelServer.js"
import { eventuallyEffect } from "../../support/waitFor.js"
import { builtinTools } from "../../../src/tools/builtins.js"
import { makeTempDir } from "../../support/tempDir.js"
import { bearer, request, startServer } from "./harness.js"

const json = { ...bearer, "content-type": "application/json" }

/** Events of one turn, from its incoming to its finish. */
const turnOf = (events: ReadonlyArray<AgentEvent>, turnId: string) => events.filter((e) => "turnId" in e && e.turnId === turnId)

describe("HTTP API: routes", () => {
  it.live("bad input is a 400 naming the field, for every route that takes input; unknown routes are 404 JSON", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* startServer()
      const post = (body: string) => request(`${base}/message`, { method: "POST", headers: json, body })
      const cases: ReadonlyArray<readonly [Effect.Effect<{ status: number; json: unknown }>, string]> = [
        [post("{\"text\":\"\"}"), "text"],
        [post("{\"text\":\"   \"}"), "text"],
        [post("{}"), "text"],
        [post("{\"text\":42}"), "text"],
        [post("not json"), "body"],
        [post("[1,2]"), "body"],
        [post("{\"text\":\"hi\",\"interface\":\"heartbeat\"}"), "interface"],
        [post("{\"text\":\"hi\",\"interface\":7}"), "interface"],
        [post("{\"text\":\"hi\",\"channel\":\"\"}"), "channel"],
        [request(`${base}/history?limit=0`, { headers: bearer }), "limit"],
        [request(`${base}/history?limit=501`, { headers: bearer }), "limit"],
        [request(`${base}/history?limit=abc`, { headers: bearer }), "limit"],
        [request(`${base}/history?before=-1`, { headers: bearer }), "before"],
        [request(`${base}/history?session=../../etc/passwd`, { headers: bearer }), "session"],
        [request(`${base}/sessions/.hidden/activity`, { headers: bearer }), "id"],
        [request(`${base}/auth?ticket=`), "ticket"],
        [request(`${base}/recall/search`, { headers: bearer }), "q"],
        [request(`${base}/recall/search?q=%20%20`, { headers: bearer }), "q"],
        [request(`${base}/recall/search?q=x&limit=51`, { headers: bearer }), "limit"],
        [request(`${base}/recall/search?q=x&after=yesterday`, { headers: bearer }), "after"],
        [request(`${base}/recall/search?q=x&before=2026-13-45`, { headers: bearer }), "before"]
      ]
      for (const [call, field] of cases) {
        const answer = yield* call
        expect(answer.status, JSON.stringify(answer.json)).toBe(400)
        expect(answer.json).toMatchObject({ field, error: expect.any(String) })
      }
      // An id with an encoded slash never reaches the route: the target is not in canonical form.
      const encoded = yield* request(`${base}/sessions/..%2F..%2Fx/activity`, { headers: bearer })
      expect(encoded.status).toBe(400)
      expect(encoded.json).toEqual({ error: expect.stringContaining("not in canonical form") })
      const missing = yield* request(`${base}/sessions/20200101-000000-000-abcd/activity`, { headers: bearer })
      expect(missing.status).toBe(404)
      expect((yield* request(`${base}/history?session=20200101-000000-000-abcd`, { headers: bearer })).status).toBe(404)
      const unknown = yield* request(`${base}/nope`, { headers: bearer })
      expect(unknown.status).toBe(404)
      expect(unknown.json).toEqual({ error: "no route GET /nope" })
      expect((yield* request(`${base}/status`, { method: "POST", headers: bearer })).status).toBe(404)
    })))

  it.live("bodies over the cap are 413, with or without Content-Length; at the cap they are read", () =>
    Effect.scoped(Effect.gen(function*() {
      // POST /message's cap leaves room for the files of one message (media.maxTurnBytes, base64); other routes keep theirs.
      const { base } = yield* startServer({ bodyLimitBytes: 1000, config: { media: { maxTurnBytes: 3 } } })
      const cap = messageBodyLimit(1000, 3)
      const big = JSON.stringify({ text: "x".repeat(cap) })
      const declared = yield* request(`${base}/message`, { method: "POST", headers: json, body: big })
      expect(declared.status).toBe(413)
      // Chunked: no Content-Length, so only counting while reading can catch it.
      const chunks = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big))
          controller.close()
        }
      })
      const streamed = yield* request(`${base}/message`, { method: "POST", headers: json, body: chunks, duplex: "half" } as RequestInit)
      expect(streamed.status).toBe(413)
      const fits = JSON.stringify({ text: "x".repeat(cap - 11) })
      expect(fits.length).toBe(cap)
      expect((yield* request(`${base}/message`, { method: "POST", headers: json, body: fits })).status).toBe(202)
      // Another route's body is held to the server's own cap.
      const schedule = JSON.stringify({ prompt: "x".repeat(1001), at: "in 1 hour" })
      expect((yield* request(`${base}/schedules`, { method: "POST", headers: json, body: schedule })).status).toBe(413)
    })))

  it.live("/context/segments and /segments: the context's cut, budget, tokens and segment tree, before and after a trimming turn", () =>
    Effect.scoped(Effect.gen(function*() {
      const maxContextTokens = 12_000
      const { base, client } = yield* startServer({
        sessionMessages: 2_000,
        config: { maxContextTokens, recall: false, embeddingModel: false },
        // Every summary and the turn get this answer.
        model: { fallback: FakeReply.text("We checked the router: the DHCP range moved and DNS is on the pi.") }
      })
      // Before any turn: planned as the next turn would be, nothing summarized yet, so nothing may be cut.
      const before = yield* request(`${base}/context/segments`, { headers: bearer })
      expect(before.status).toBe(200)
      expect(before.json).toMatchObject({ request: "next", messages: 2_000, cut: 0, injected: [], budget: { maxContextTokens } })
      const events = yield* client.events()
      const { turnId } = yield* client.send({ text: "what changed on the router?" })
      yield* events.pipe(Stream.takeUntil((e) => e.type === "finish" && e.turnId === turnId), Stream.runDrain)

      // The next request: the turn's question and answer are in it. The turn answered at once from a cut at user
      // messages (2,000 messages are far more than a window to summarize first); the summaries follow in the
      // background, and the next request carries them once they are there.
      const next = request(`${base}/context/segments`, { headers: bearer }).pipe(
        Effect.map((answer) => answer.json as ContextSegmentsResponse)
      )
      expect(yield* eventuallyEffect(Effect.map(next, (planned) => planned.injected.length > 0))).toBe(true)
      const after = yield* next
      expect(after.request).toBe("next")
      expect(after.messages).toBe(2_002)
      expect(after.cut).toBeGreaterThan(0)
      expect(after.injected.length).toBeGreaterThan(0)
      expect(after.injected.every((segment) => segment.inContext && segment.summary !== null)).toBe(true)
      expect(after.tokens.total).toBeLessThanOrEqual(maxContextTokens)
      expect(after.tokens.total).toBe(after.tokens.system + after.tokens.tools + after.tokens.summary + after.tokens.raw)
      expect(after.budget.summary + after.budget.raw).toBeLessThanOrEqual(maxContextTokens)

      const tree = yield* request(`${base}/segments`, { headers: bearer })
      expect(tree.status).toBe(200)
      const segments = tree.json as SegmentsResponse
      expect(segments).toMatchObject({ sessionId: after.sessionId, messages: 2_002, cut: after.cut })
      const l0 = segments.segments.filter((s) => s.level === 0).sort((a, b) => a.start - b.start)
      expect(l0[0]!.start).toBe(0)
      expect(segments.segments.filter((s) => s.inContext).map((s) => s.id).sort()).toEqual(after.injected.map((s) => s.id).sort())

      // The system prompt shows the summary the next request carries.
      const system = (yield* request(`${base}/context/system`, { headers: bearer })).json as SystemPromptResponse
      expect(system.sections.at(-1)).toMatchObject({ kind: "conversation-summary" })
      expect(system.sections.at(-1)!.text).toContain("<conversation_summary>")

      expect((yield* request(`${base}/segments?session=..%2Fetc`, { headers: bearer })).status).toBe(400)
      expect((yield* request(`${base}/segments?session=20200101-000000-000-0000`, { headers: bearer })).status).toBe(404)
    })), 120_000)

  it.live("recall: a finished turn is found by /recall/search, with its session and range; /recall/stats counts it", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, client, model } = yield* startServer()
      yield* model.reply(FakeReply.text("The heron nests by the old mill."))
      const events = yield* client.events()
      const { turnId } = yield* client.send({ text: "where does the heron nest?" })
      yield* events.pipe(Stream.takeUntil((e) => e.type === "finish" && e.turnId === turnId), Stream.runDrain)
      // The running agent indexes a turn in the background once it is done: the search catches up within moments.
      const found = yield* request(`${base}/recall/search?q=heron%20mill&limit=3`, { headers: bearer }).pipe(
        Effect.filterOrFail((answer) => ((answer.json as { hits?: Array<unknown> }).hits ?? []).length > 0),
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(100))))
      )
      expect(found.status).toBe(200)
      const result = found.json as { query: string; mode: string; hits: Array<{ source: string; sessionId: string; text: string; messageStart: number }> }
      expect(result.query).toBe("heron mill")
      expect(result.hits[0]).toMatchObject({ source: "session", messageStart: 0 })
      expect(result.hits[0]?.text).toContain("old mill")
      const sessions = (yield* request(`${base}/sessions`, { headers: bearer })).json as { currentSessionId: string }
      expect(result.hits[0]?.sessionId).toBe(sessions.currentSessionId)
      const stats = yield* request(`${base}/recall/stats`, { headers: bearer })
      expect(stats.status).toBe(200)
      expect(stats.json).toMatchObject({ messages: 2, chunks: 1, sessions: 1 })
      // A date range that excludes today finds nothing.
      const old = yield* request(`${base}/recall/search?q=heron&before=2001-01-01`, { headers: bearer })
      expect((old.json as { hits: Array<unknown> }).hits).toEqual([])
    })))

  it.live("POST /message → 202 with a turn id; the turn's events on /events carry it, in order, and the reply is recorded", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, client, model } = yield* startServer()
      yield* model.reply(
        FakeReply.toolCalls([{ id: "c1", name: "glob", args: { pattern: "*.md" } }]),
        FakeReply.text("Five files.")
      )
      const events = yield* client.events()
      const { turnId } = yield* client.send({ text: "list the files" })
      const seen = Chunk.toReadonlyArray(yield* events.pipe(
        Stream.takeUntil((e) => e.type === "outgoing" && e.turnId === turnId),
        Stream.runCollect
      ))
      const mine = turnOf(seen, turnId)
      // Text deltas come as the model streams them: one or more.
      const types = mine.map((e) => e.type).filter((type, i, all) => type !== "text-delta" || all[i - 1] !== "text-delta")
      expect(types).toEqual(["incoming", "thinking", "tool-call", "tool-result", "thinking", "text-delta", "finish", "outgoing"])
      expect(mine[0]).toMatchObject({ type: "incoming", text: "list the files", interface: "web", channel: "web", messageId: turnId })
      // Each frame decoded with the one Schema (the client skips one that does not), and names its turn and conversation.
      for (const event of mine) expect(event).toMatchObject({ turnId, conversationId: "web:web" })
      // The web UI's decoder reads every frame of the stream as the Schema does.
      for (const event of seen) expect(decodeEvent(JSON.stringify(Schema.encodeSync(AgentEvent)(event)))).toEqual(event)
      expect(mine.find((e) => e.type === "tool-call")).toMatchObject({ name: "glob", params: { pattern: "*.md" } })
      const result = mine.find((e) => e.type === "tool-result")
      expect(result).toMatchObject({ name: "glob", isError: false, durationMs: expect.any(Number) })
      expect(mine.filter((e) => e.type === "text-delta").map((e) => e.type === "text-delta" ? e.delta : "").join("")).toBe("Five files.")
      expect(mine.find((e) => e.type === "finish")).toMatchObject({ reply: "Five files.", steps: 2, delivered: true, usage: { inputTokens: 24 } })
      const seqs = seen.map((e) => e.seq)
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
      expect(new Set(seqs).size).toBe(seqs.length)
      const history = yield* request(`${base}/history?limit=2`, { headers: bearer })
      expect(history.json).toMatchObject({ total: 4, nextBefore: 2, messages: [{ index: 2, message: { _tag: "tool" } }, { index: 3, message: { _tag: "assistant", text: "Five files." } }] })
      const older = yield* request(`${base}/history?limit=2&before=2`, { headers: bearer })
      expect(older.json).toMatchObject({ nextBefore: null, messages: [{ index: 0, message: { _tag: "user", text: "list the files" } }, { index: 1 }] })
      const status = yield* request(`${base}/status`, { headers: bearer })
      expect(status.json).toMatchObject({ runtime: { inbox: 0, turns: 1, listeners: 1 }, usage: { turns: 1 } })
    })))

  it.live("a NO_REPLY never reaches a client: not in the deltas, no outgoing event", () =>
    Effect.scoped(Effect.gen(function*() {
      const { client, model } = yield* startServer()
      yield* model.reply(FakeReply.text("Saved the notes. NO_REPLY"))
      const events = yield* client.events()
      const { turnId } = yield* client.send({ text: "[heartbeat-ish]" })
      const seen = Chunk.toReadonlyArray(yield* events.pipe(Stream.takeUntil((e) => e.type === "finish"), Stream.runCollect))
      const text = seen.filter((e) => e.type === "text-delta").map((e) => e.type === "text-delta" ? e.delta : "").join("")
      expect(text).toBe("Saved the notes.")
      expect(seen.find((e) => e.type === "finish")).toMatchObject({ turnId, delivered: false })
      expect(seen.some((e) => e.type === "outgoing")).toBe(false)
    })))

  it.live("Last-Event-ID over HTTP: a client that reconnects gets what it missed, without duplicates", () =>
    Effect.scoped(Effect.gen(function*() {
      const { client, model } = yield* startServer()
      yield* model.reply(FakeReply.text("one"), FakeReply.text("two"))
      const first = yield* client.events()
      const a = yield* client.send({ text: "first" })
      const firstTurn = Chunk.toReadonlyArray(yield* first.pipe(Stream.takeUntil((e) => e.type === "outgoing"), Stream.runCollect))
      const last = firstTurn.at(-1)!
      expect(last).toMatchObject({ type: "outgoing", turnId: a.turnId })
      // Disconnected now: the next turn happens while nobody listens.
      const listener = yield* client.events()
      const b = yield* client.send({ text: "second" })
      yield* listener.pipe(Stream.takeUntil((e) => e.type === "finish"), Stream.runDrain)
      const resumed = yield* client.events(Option.some(last.seq))
      const missed = Chunk.toReadonlyArray(yield* resumed.pipe(Stream.takeUntil((e) => e.type === "finish"), Stream.runCollect))
      expect(missed[0]!.seq).toBeGreaterThan(last.seq)
      expect(missed.every((e) => "turnId" in e && e.turnId === b.turnId)).toBe(true)
      expect(missed.map((e) => e.type)).toContain("incoming")
      const raw = yield* Effect.promise(async () => {
        // The browser's way: the header on a plain request.
        const response = await fetch(`${client.baseUrl}/events`, { headers: { ...bearer, "last-event-id": String(last.seq) } })
        const reader = response.body!.getReader()
        let text = ""
        while (!text.includes("event: finish")) text += new TextDecoder().decode((await reader.read()).value)
        await reader.cancel()
        return text
      })
      expect(raw.startsWith(": connected\n\n")).toBe(true)
      expect(raw).toContain(`id: ${last.seq + 1}\nevent: incoming\n`)
      expect(raw).not.toContain(`id: ${last.seq}\n`)
    })))

  it.live("the inspector's routes: sessions with the live one marked, activity per day and hour, the system prompt by section, usage, notes summary", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, client, model, dir } = yield* startServer()
      yield* model.reply(FakeReply.text("hello"))
      const events = yield* client.events()
      yield* client.send({ text: "hi" })
      yield* events.pipe(Stream.takeUntil((e) => e.type === "finish"), Stream.runDrain)
      const sessions = (yield* request(`${base}/sessions`, { headers: bearer })).json as { currentSessionId: string; sessions: Array<{ id: string; current: boolean; messages: number }> }
      expect(sessions.sessions).toHaveLength(1)
      expect(sessions.sessions[0]).toMatchObject({ id: sessions.currentSessionId, current: true, messages: 2 })
      const activity = yield* request(`${base}/sessions/${sessions.currentSessionId}/activity`, { headers: bearer })
      const body = activity.json as { total: number; roles: unknown; daily: Array<{ count: number }>; hourly: Array<{ hour: number; count: number }> }
      expect(body.total).toBe(2)
      expect(body.roles).toEqual({ user: 1, assistant: 1, tool: 0 })
      expect(body.daily.reduce((n, d) => n + d.count, 0)).toBe(2)
      expect(body.hourly).toHaveLength(24)
      expect(body.hourly.reduce((n, h) => n + h.count, 0)).toBe(2)
      NodeFs.writeFileSync(NodePath.join(dir, "KNOWLEDGE.md"), "# Knowledge\nThe sky is blue.\n")
      const system = (yield* request(`${base}/context/system`, { headers: bearer })).json as SystemPromptResponse
      expect(system.sections[0]).toMatchObject({ kind: "preamble" })
      const knowledge = system.sections.find((s) => s.source === "KNOWLEDGE.md")
      expect(knowledge?.text).toBe("<document path=\"KNOWLEDGE.md\">\n# Knowledge\nThe sky is blue.\n</document>")
      expect(knowledge?.chars).toBe(knowledge?.text.length)
      // Tokens as o200k_base counts them, section by section and for the whole prompt with its separators.
      for (const section of system.sections) expect(section.tokens, section.source).toBe(countTokens(section.text))
      const whole = system.sections.map((s) => s.text).join("\n\n")
      expect(system.totalChars).toBe(whole.length)
      expect(system.totalTokens).toBe(countTokens(whole))
      // The operator's next turn is offered every registered tool: here the built-in ones (with the running agent's
      // jobs and spawn), but web_search (no search provider is configured) and ask_user_question (no surface that
      // shows questions runs in this agent).
      const tools = system.sections.find((s) => s.kind === "tools")
      expect(system.sections.at(-1)).toBe(tools)
      const offered = (tools?.text ?? "").split("\n").slice(1, -1).map((line) => line.slice(0, line.indexOf(":")))
      const notOffered = ["web_search", "ask_user_question"]
      expect(offered.toSorted()).toEqual(
        [...builtinTools.map((t) => t.metadata.toolId), "jobs", "spawn"].filter((id) => !notOffered.includes(id)).toSorted()
      )
      expect((yield* request(`${base}/usage`, { headers: bearer })).json).toMatchObject({ turns: 1, inputTokens: 12, outputTokens: 7 })
      expect((yield* request(`${base}/notes/summary`, { headers: bearer })).json).toEqual({ summary: null })
      // Two daily notes: POST regenerates the summary of the one before the latest with the model, GET then serves it.
      NodeFs.mkdirSync(NodePath.join(dir, "notes"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(dir, "notes/2026-01-01.md"), "fed the heron\n")
      NodeFs.writeFileSync(NodePath.join(dir, "notes/2026-01-02.md"), "today\n")
      yield* model.reply(FakeReply.text("A quiet day by the pond."))
      const summary = { summary: { text: "A quiet day by the pond.", sources: ["notes/2026-01-01.md"], fresh: true } }
      const regenerated = yield* request(`${base}/notes/summary`, { method: "POST", headers: bearer })
      expect(regenerated.status).toBe(200)
      expect(regenerated.json).toEqual(summary)
      expect(JSON.stringify((yield* model.modelRequests).at(-1)?.body)).toContain("fed the heron")
      expect((yield* request(`${base}/notes/summary`, { headers: bearer })).json).toEqual(summary)
    })))

  it.live("/ serves the built UI page and its assets, a plain page when it is not built, and nothing outside assets/", () =>
    Effect.scoped(Effect.gen(function*() {
      const unbuilt = yield* startServer()
      const plain = yield* request(`${unbuilt.base}/`)
      expect(plain.status).toBe(200)
      expect(plain.text).toContain("not built")
      expect(plain.text).not.toContain("<script")
      const webRoot = makeTempDir("kern-web-")
      NodeFs.mkdirSync(NodePath.join(webRoot, "assets"))
      NodeFs.writeFileSync(NodePath.join(webRoot, "index.html"), "<!doctype html><script type=module src=/assets/app.js></script>")
      NodeFs.writeFileSync(NodePath.join(webRoot, "assets/app.js"), "console.log(1)")
      NodeFs.writeFileSync(NodePath.join(webRoot, "secret.txt"), "no")
      const built = yield* startServer({ webRoot })
      const page = yield* request(`${built.base}/`)
      expect(page.text).toContain("/assets/app.js")
      const script = yield* request(`${built.base}/assets/app.js`)
      expect(script.status).toBe(200)
      expect(script.headers.get("content-type")).toMatch(/javascript/)
      for (const path of ["/assets/../secret.txt", "/assets/%2e%2e/secret.txt", "/assets/..%2fsecret.txt", "/assets/", "/assets/nope.js", "/secret.txt"]) {
        const answer = yield* request(`${built.base}${path}`)
        expect([400, 401, 404], path).toContain(answer.status)
        expect(answer.text).not.toBe("no")
      }
    })))

  it.live("a message that arrives while its channel's turn runs is injected: its incoming names it, under the running turn's id", () =>
    Effect.scoped(Effect.gen(function*() {
      const { client, model } = yield* startServer()
      yield* model.reply(
        FakeReply.toolCalls([{ id: "c1", name: "glob", args: { pattern: "*.md" } }], { delay: "1 second" }),
        FakeReply.text("Both done.")
      )
      const events = yield* client.events()
      const first = yield* client.send({ text: "first" })
      yield* model.awaitRequests(1)
      const second = yield* client.send({ text: "also this" })
      expect(second.turnId).not.toBe(first.turnId)
      const follow = makeTurnFollower(second.turnId)
      const seen = Chunk.toReadonlyArray(yield* events.pipe(Stream.takeUntil((e) => e.type === "finish"), Stream.runCollect))
      const injected = seen.find((e) => e.type === "incoming" && e.messageId === second.turnId)
      expect(injected).toMatchObject({ turnId: first.turnId, text: "also this" })
      // Following the second message leads to the first turn's answer.
      const followed = seen.filter(follow)
      expect(followed[0]).toBe(injected)
      expect(followed.at(-1)).toMatchObject({ type: "finish", turnId: first.turnId, reply: "Both done." })
      expect(seen.filter((e) => e.type === "incoming" && e.turnId !== first.turnId)).toHaveLength(0)
    })))

  it.live("POST /sessions starts a new session: it is the current one and the next turn writes there", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, client, model } = yield* startServer()
      const before = (yield* request(`${base}/sessions`, { headers: bearer })).json as { currentSessionId: string }
      const created = yield* request(`${base}/sessions`, { method: "POST", headers: bearer })
      expect(created.status).toBe(201)
      const { sessionId } = created.json as { sessionId: string }
      expect(sessionId).not.toBe(before.currentSessionId)
      const after = (yield* request(`${base}/sessions`, { headers: bearer })).json as { currentSessionId: string; sessions: Array<{ id: string; current: boolean }> }
      expect(after.currentSessionId).toBe(sessionId)
      expect(after.sessions.map((s) => [s.id, s.current])).toEqual([[before.currentSessionId, false], [sessionId, true]])
      yield* model.reply(FakeReply.text("fresh"))
      const events = yield* client.events()
      yield* client.send({ text: "in the new one" })
      yield* events.pipe(Stream.takeUntil((e) => e.type === "finish"), Stream.runDrain)
      expect((yield* request(`${base}/history`, { headers: bearer })).json).toMatchObject({ sessionId, total: 2 })
      expect((yield* request(`${base}/history?session=${before.currentSessionId}`, { headers: bearer })).json).toMatchObject({ total: 0 })
    })))
})
