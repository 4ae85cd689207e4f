import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import type { StatusResponse } from "../../src/channels/web/api.js"
import { bearer, request, startServer } from "../channels/web/harness.js"
import { FakeReply } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"

const answer = `Here is what I found. ${"The router keeps DHCP on .100-.200 and DNS on the pi; nothing else moved. ".repeat(40)}`

const secret = "tok-0123456789abcdef"

const config = {
  summaryModel: "summary-model",
  maxContextTokens: 20_000,
  embeddingModel: false,
  recall: false
}

describe("the summarizer's state in the status", () => {
  it.live("GET /status and `kern status` (text and --json) show the failures, the last error, the last success, the lag and the fallback cut", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.scoped(Effect.gen(function*() {
        const { base, dir, model } = yield* startServer({
          config,
          sessionMessages: 400,
          model: { fallback: FakeReply.text(answer) },
          files: { ".kern/.env": `PROXY_TOKEN=${secret}\n` }
        })
        // A proxy that echoes a secret kern holds in its error.
        yield* model.answerModel(
          "summary-model",
          FakeReply.error(404, { body: JSON.stringify({ error: { message: `model summary-model not found (token ${secret})` } }) })
        )
        const status = request(`${base}/status`, { headers: bearer }).pipe(Effect.map((answer) => answer.json as StatusResponse))
        const before = yield* status
        expect(before.summarizer).toMatchObject({ state: "ok", consecutiveFailures: 0, lastSuccessAt: null, fallbackCut: false, lagMessages: 400 })
        expect((yield* request(`${base}/message`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ text: "what changed?" }) })).status).toBe(202)
        // The turn over a window it outgrew: its summaries fail, and it is cut at user messages instead. The summaries
        // are built in the background after the turn's answer: wait for their failure, not only for the turn.
        const after = yield* status.pipe(
          Effect.filterOrFail((s) => s.runtime.turns >= 1 && (s.summarizer?.consecutiveFailures ?? 0) >= 1, () => "no failed summary yet"),
          Effect.retry(Schedule.spaced("50 millis")),
          Effect.timeout("60 seconds")
        )
        expect(after.summarizer).toMatchObject({
          state: "failing",
          consecutiveFailures: 1,
          lastSuccessAt: null,
          fallbackCut: true,
          sessionId: after.runtime.sessionId
        })
        expect(after.summarizer?.lastError).toContain("not found")
        // Redacted: the provider's key never shows in the status.
        expect(after.summarizer?.lastError).not.toContain(secret)
        expect(after.summarizer?.lastError).toContain("[redacted:PROXY_TOKEN]")
        expect(after.summarizer?.nextAttemptAt).not.toBeNull()
        expect(after.summarizer?.lagMessages).toBe(after.runtime.messages)
        return dir
      }))

      // The agent has stopped: kern.db keeps what the status shows.
      const env = { OPENROUTER_API_KEY: "sk-test" }
      const json = JSON.parse((yield* Effect.promise(() => runKernIn(["status", dir, "--json"], { env }))).stdout)
      expect(json.summarizer).toMatchObject({ state: "failing", consecutiveFailures: 1, lastSuccessAt: null, fallbackCut: true })
      expect(json.summarizer.lastError).toContain("not found")
      expect(json.summarizer.lagMessages).toBeGreaterThanOrEqual(402)
      const text = (yield* Effect.promise(() => runKernIn(["status", dir], { env }))).stdout
      expect(text).toMatch(/summaries: failing \(1 in a row, next attempt after .*\): .*not found/)
      expect(text).toContain("fallback cut in effect")
    }), 120_000)
})
