import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { AssistantMessage, SessionHeader, UserMessage } from "../../../src/session/messages.js"
import { lineOf } from "../../../src/session/SessionStore.js"
import { bearer, request, startServer } from "./harness.js"

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
})
