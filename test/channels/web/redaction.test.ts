import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { AssistantMessage, SessionHeader, UserMessage } from "../../../src/session/messages.js"
import { lineOf } from "../../../src/session/SessionStore.js"
import { FakeReply } from "../../support/fakeModelServer.js"
import { bearer, request, startServer } from "./harness.js"
import { rawBodyReader } from "./rawHttp.js"

const secret = "tok_live_7Qx9Vb2Lm4Np8Rs6Tw1Yz3"
const sid = "20260101-100000-000-aaaa"

// A session written before redaction existed (or by hand): the file holds the secret, the answers must not.
const oldSession = [
  new SessionHeader({ version: 1, id: sid, createdAt: "2026-01-01T10:00:00.000Z", agent: "t" }),
  new UserMessage({ text: `deploy with ${secret} please`, at: "2026-01-01T10:00:00.000Z" }),
  new AssistantMessage({ text: `deployed; the token ${secret} works`, toolCalls: [{ id: "c1", name: "bash", params: { command: `curl -H "X-Key: ${secret}" x` } }], at: "2026-01-01T10:00:01.000Z" })
].map(lineOf).join("")

describe("HTTP answers carry no known secret", () => {
  it.live("/history and /recall/search of a session that holds one show [redacted:NAME]", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* startServer({
        // An empty kern.db beside the old session: a fresh database is meant (kern refuses a missing one).
        files: { ".kern/.env": `SERVICE_TOKEN=${secret}\n`, [`.kern/sessions/${sid}.jsonl`]: oldSession, ".kern/kern.db": "" }
      })
      const history = yield* request(`${base}/history?session=${sid}`, { headers: bearer })
      expect(history.status).toBe(200)
      expect(history.text).not.toContain(secret)
      expect(history.text).toContain("[redacted:SERVICE_TOKEN]")
      // Recall indexes in the background: wait until the search finds the session (at most a minute).
      const search = request(`${base}/recall/search?q=deploy`, { headers: bearer })
      yield* Effect.repeat(search, {
        until: (answer) => answer.status === 200 && answer.text.includes("deploy"),
        schedule: Schedule.spaced("100 millis")
      }).pipe(Effect.timeout("60 seconds"))
      const found = yield* search
      expect(found.text).not.toContain(secret)
    })))

  it.live("/events streams no known secret: the user's text, the model's streamed reply and its tool-call arguments show [redacted:NAME]", () =>
    Effect.scoped(Effect.gen(function*() {
      // The provider key as an operator keeps it, in .kern/.env, and another secret beside it.
      const providerKey = "sk-or-v1-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
      const { base, model } = yield* startServer({
        files: { ".kern/.env": `OPENROUTER_API_KEY=${providerKey}\nSERVICE_TOKEN=${secret}\n` }
      })
      const known = [providerKey, secret]
      yield* model.reply(
        FakeReply.toolCalls(
          [{ id: "c1", name: "read", args: { path: `notes/${providerKey}.md`, [secret]: `x${secret}x` } }],
          { text: `Looking with ${secret} now. ` }
        ),
        // The fake streams a text in three deltas: each secret arrives split across them.
        FakeReply.text(`The key is ${providerKey}; the token is ${secret}.`)
      )
      // What an authenticated client reads, as raw as it comes off the socket, until the turn's finish.
      const response = yield* Effect.promise(() => fetch(`${base}/events`, { headers: bearer }))
      expect(response.status).toBe(200)
      const { readUntil, cancel } = rawBodyReader(response)
      const opened = yield* readUntil((text) => text.includes(": connected"))
      const reading = yield* Effect.fork(readUntil((text) => text.includes("event: finish")))
      const posted = yield* request(`${base}/message`, {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ text: `use ${providerKey} and ${secret}` })
      })
      expect(posted.status).toBe(202)
      const streamed = opened + (yield* Fiber.join(reading))
      yield* cancel

      for (const value of known) expect(streamed.includes(value), `the stream holds ${value.slice(0, 8)}…`).toBe(false)
      const events = streamed.split("\n").filter((line) => line.startsWith("data: ")).map((line) =>
        JSON.parse(line.slice(6)) as { readonly type: string; readonly delta?: string; readonly text?: string; readonly params?: unknown }
      )
      // What a client shows: the deltas joined. A secret split across them is replaced whole, never shown in parts.
      const shown = events.flatMap((event) => event.type === "text-delta" ? [event.delta ?? ""] : []).join("")
      for (const value of known) expect(shown.includes(value), `the joined reply holds ${value.slice(0, 8)}…`).toBe(false)
      expect(shown).toContain("The key is [redacted:OPENROUTER_API_KEY]; the token is [redacted:SERVICE_TOKEN].")
      const incoming = events.find((event) => event.type === "incoming")
      expect(incoming?.text).toBe("use [redacted:OPENROUTER_API_KEY] and [redacted:SERVICE_TOKEN]")
      const call = events.find((event) => event.type === "tool-call")
      expect(call?.params).toEqual({ path: "notes/[redacted:OPENROUTER_API_KEY].md", "[redacted:SERVICE_TOKEN]": "x[redacted:SERVICE_TOKEN]x" })
    })))
})
