import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import { summaryConcurrency } from "../../src/context/segmentPass.js"
import { backoffDelay } from "../../src/context/summarizerHealth.js"
import { messageOverheadTokens } from "../../src/context/sentText.js"
import { FakeReply, makeWith, type RecordedRequest } from "../support/fakeModelServer.js"
import { operatorTurn, testRuntime } from "../support/operatorTurn.js"
import { summaryAgentMaxContextTokens, summaryModelAgent } from "./summaryAgent.js"

const maxContextTokens = summaryAgentMaxContextTokens
const turns = 33
/** The operator's pace: the time between two turns, on the TestClock. */
const pace = Duration.seconds(10)

interface ResponsesItem {
  readonly role?: string
  readonly type?: string
  readonly content?: unknown
  readonly name?: string
  readonly arguments?: string
  readonly output?: unknown
}

interface ResponsesBody {
  readonly model?: string
  readonly input: ReadonlyArray<ResponsesItem>
  readonly tools?: ReadonlyArray<{ readonly name?: string; readonly description?: string; readonly parameters?: unknown }>
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((part: { readonly text?: unknown }) => (typeof part.text === "string" ? part.text : JSON.stringify(part))).join("\n")
    : JSON.stringify(content ?? "")

/**
 * A request as kern counts a context: the system prompt, each message's text with its overhead, and each tool's
 * name, description and parameters.
 */
const requestTokens = (request: RecordedRequest, count: (text: string) => number) => {
  const body = request.body as ResponsesBody
  let tokens = 0
  for (const item of body.input) {
    if (item.role === "system") tokens += count(textOf(item.content))
    else if (item.type === "function_call") tokens += count(`${item.name ?? ""} ${item.arguments ?? ""}`) + messageOverheadTokens
    else if (item.type === "function_call_output") tokens += count(textOf(item.output)) + messageOverheadTokens
    else tokens += count(textOf(item.content)) + messageOverheadTokens
  }
  for (const tool of body.tools ?? []) tokens += count(`${tool.name ?? ""}\n${tool.description ?? ""}\n${JSON.stringify(tool.parameters)}`)
  return tokens
}

const modelOf = (request: RecordedRequest) => (request.body as ResponsesBody).model

/** Summary calls the backoff allows in `elapsed`: the first pass's few at once, then one probe per wait that ran out. */
const allowedSummaryCalls = (elapsed: Duration.Duration) => {
  let at = Duration.zero
  let windows = 1
  while (Duration.lessThanOrEqualTo(Duration.sum(at, backoffDelay(windows)), elapsed)) {
    at = Duration.sum(at, backoffDelay(windows))
    windows += 1
  }
  return summaryConcurrency + (windows - 1)
}

/** A long answer, so the conversation outgrows the window within a few turns. */
const answer = `Here is what I found. ${"The router keeps DHCP on .100-.200 and DNS on the pi; nothing else moved. ".repeat(40)}`

describe("a failing summary model", () => {
  it.scoped("33 turns: every request stays within maxContextTokens, the summary calls follow the backoff (kept across a restart), and once the model is back the summaries catch up and the fallback ends", () =>
    Effect.gen(function*() {
      const server = yield* makeWith({ fallback: FakeReply.text(answer) })
      // The summary model is misconfigured: every summary request fails.
      yield* server.answerModel("summary-model", FakeReply.error(404, { body: JSON.stringify({ error: { message: "model summary-model not found" } }) }))
      // ~30k tokens already: over the window from the first turn.
      const dir = summaryModelAgent(server.baseURL, { "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n" })

      const failing = yield* Effect.gen(function*() {
        const context = yield* ContextWindow
        const count = yield* context.counter
        const notices: Array<string> = []
        let last = { sessionId: "", messages: 0 }
        for (let i = 0; i < turns; i++) {
          const done = yield* operatorTurn(`turn ${i}: what changed on the router?`)
          expect(done.outcome.failure).toBeUndefined()
          notices.push(...done.events.flatMap((e) => (e.type === "context" && e.text.includes("cut at user messages") ? [e.text] : [])))
          last = { sessionId: done.sessionId, messages: done.messages }
          yield* TestClock.adjust(pace)
        }
        const requests = yield* server.modelRequests
        const turnRequests = requests.filter((r) => modelOf(r) === "test-model")
        const summaryRequests = requests.filter((r) => modelOf(r) === "summary-model")
        const largest = Math.max(...turnRequests.map((r) => requestTokens(r, count)))
        console.log(
          `kern: ${turns} turns with a failing summary model: ${requests.length} model calls ` +
            `(${summaryRequests.length} summary), largest request ${largest} tokens of ${maxContextTokens}`
        )
        expect(turnRequests).toHaveLength(turns)
        expect(largest).toBeLessThanOrEqual(maxContextTokens)
        expect(summaryRequests.length).toBeGreaterThan(0)
        expect(summaryRequests.length).toBeLessThanOrEqual(allowedSummaryCalls(Duration.times(pace, turns)))
        // Said once, when the fallback began.
        expect(notices).toHaveLength(1)
        const status = yield* context.summaryStatus(last.sessionId, last.messages)
        expect(status).toMatchObject({ state: "failing", fallbackCut: true, lastSuccessAt: null })
        expect(status.lastError).toContain("not found")
        expect(status.lagMessages).toBeGreaterThan(400)
        return status
      }).pipe(Effect.provide(testRuntime(dir)))

      // A restart: kern.db kept the backoff and where the raw window starts, so the new process asks for no summary
      // before the wait is over, stays within the window, and does not announce the fallback again.
      const before = (yield* server.modelRequests).length
      const restarted = yield* Effect.gen(function*() {
        const context = yield* ContextWindow
        const count = yield* context.counter
        const done = yield* operatorTurn("after the restart: anything new?")
        expect(done.outcome.failure).toBeUndefined()
        expect(done.events.some((e) => e.type === "context")).toBe(false)
        const requests = (yield* server.modelRequests).slice(before)
        expect(requests.map(modelOf)).toEqual(["test-model"])
        expect(requestTokens(requests[0]!, count)).toBeLessThanOrEqual(maxContextTokens)
        return yield* context.summaryStatus(done.sessionId, done.messages)
      }).pipe(Effect.provide(testRuntime(dir)))
      expect(restarted).toMatchObject({ state: "failing", consecutiveFailures: failing.consecutiveFailures, fallbackCut: true })

      yield* Effect.gen(function*() {
        const context = yield* ContextWindow
        const count = yield* context.counter
        // The model is back: after its wait, the next turn's background pass probes it, then catches up.
        yield* server.answerModel("summary-model", undefined)
        yield* TestClock.adjust(backoffDelay(failing.consecutiveFailures))
        yield* operatorTurn("and the DNS?")
        const after = yield* operatorTurn("anything else?")
        expect(after.outcome.failure).toBeUndefined()
        const recovered = yield* context.summaryStatus(after.sessionId, after.messages)
        expect(recovered).toMatchObject({ state: "ok", consecutiveFailures: 0, fallbackCut: false })
        expect(recovered.lastSuccessAt).not.toBeNull()
        const lastRequest = (yield* server.modelRequests).filter((r) => modelOf(r) === "test-model").at(-1)!
        expect(textOf((lastRequest.body as ResponsesBody).input[0]?.content)).toContain("<conversation_summary>")
        expect(requestTokens(lastRequest, count)).toBeLessThanOrEqual(maxContextTokens)
      }).pipe(Effect.provide(testRuntime(dir)))
    }), 300_000)
})
