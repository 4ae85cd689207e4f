import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { SegmentStore } from "../../src/context/SegmentStore.js"
import { Recall } from "../../src/recall/Recall.js"
import { FakeReply, makeWith, type RecordedRequest } from "../support/fakeModelServer.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { operatorTurn, testRuntime } from "../support/operatorTurn.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const maxContextTokens = 30_000

/** The request of the turn that carries `text` (summaries are requests of their own, without tools). */
const turnRequest = (requests: ReadonlyArray<RecordedRequest>, text: string) =>
  requests.filter((r) => r.path === "/responses" && isTurn(r) && JSON.stringify(r.body).includes(text)).at(-1)

/** A turn's request offers tools; a summary's does not. */
const isTurn = (request: RecordedRequest) => (request.body as ResponsesBody).tools !== undefined

interface ResponsesBody {
  readonly input: ReadonlyArray<{ readonly role?: string; readonly type?: string; readonly content?: unknown }>
  readonly tools?: ReadonlyArray<unknown>
}

/** The text the model is sent: every input item and the tools, as the tokenizer counts it. */
const requestText = (request: RecordedRequest) => {
  const body = request.body as ResponsesBody
  return [...body.input.map((item) => JSON.stringify(item)), JSON.stringify(body.tools ?? [])].join("\n")
}

/** The system prompt of a Responses request (its system item), and the items after it. */
const split = (request: RecordedRequest) => {
  const [system, ...rest] = (request.body as ResponsesBody).input
  expect(system?.role).toBe("system")
  return { system: JSON.stringify(system?.content), rest }
}

describe("context, end to end", () => {
  it.live("a turn on a 20,000-message session answers at once within maxContextTokens; the summaries follow in the background; the next turns carry <conversation_summary> and load from the cut", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({ fallback: FakeReply.text("The operator and the agent went over the router: DHCP .100-.200, DNS on the pi.") })
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, {
        ".kern/config.json": JSON.stringify({
          provider: "openai",
          model: "test-model",
          baseURL: server.baseURL,
          maxContextTokens,
          embeddingModel: false,
          recall: false
        }),
        "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n"
      })
      writeSessionFixture(dir, 20_000)

      // The first turn (then the catch-up, as the running agent's worker does it).
      const first = yield* operatorTurn("what did we decide about DNS?").pipe(Effect.provide(testRuntime(dir)))
      expect(first.outcome.failure).toBeUndefined()
      // Nothing was summarized before: the turn did not wait for summaries but was cut at user messages, and said so.
      expect(first.events.some((e) => e.type === "context" && e.text.includes("summarizing older messages first"))).toBe(false)
      expect(first.events.some((e) => e.type === "context" && e.text.includes("cut at user messages"))).toBe(true)
      const requests = yield* server.requests
      const request = turnRequest(requests, "what did we decide about DNS?")!
      expect(requests.slice(0, requests.indexOf(request)).filter((r) => r.path === "/responses" && !isTurn(r))).toHaveLength(0)
      const { rest } = split(request)
      // Within the window by the same tokenizer the budget uses (tool definitions included).
      expect(countTokens(requestText(request))).toBeLessThanOrEqual(maxContextTokens)
      // The raw window starts at a user message: no tool result without its call.
      expect(rest[0]).toMatchObject({ role: "user" })
      // Summaries were made afterwards by the summary model (requests without tools), and rolled up.
      expect(requests.filter((r) => r.path === "/responses" && !isTurn(r)).length).toBeGreaterThan(10)
      const segments = yield* Effect.flatMap(SegmentStore, (store) => store.list(first.sessionId)).pipe(Effect.provide(testRuntime(dir)))
      expect(segments.some((s) => s.level === 1)).toBe(true)

      // The next turn carries the summaries, within the window, and stores a cut inside them.
      const second = yield* operatorTurn("and the DHCP range?").pipe(Effect.provide(testRuntime(dir)))
      expect(second.outcome.failure).toBeUndefined()
      const withSummaries = turnRequest(yield* server.requests, "and the DHCP range?")!
      expect(split(withSummaries).system).toContain("<conversation_summary>")
      expect(split(withSummaries).system).toContain("level: L")
      expect(countTokens(requestText(withSummaries))).toBeLessThanOrEqual(maxContextTokens)
      const cut = yield* Effect.flatMap(SegmentStore, (store) => store.getCut(first.sessionId)).pipe(Effect.provide(testRuntime(dir)))
      expect(Option.isSome(cut)).toBe(true)

      // A new process: the session is read from the cut on (only the window is held) and nothing is summarized again.
      const before = (yield* server.requests).length
      const third = yield* operatorTurn("and the DNS fallback?").pipe(Effect.provide(testRuntime(dir)))
      expect(third.outcome.failure).toBeUndefined()
      expect(third.loadedFrom).toBe(Option.getOrThrow(cut).messageIndex)
      expect(third.loadedFrom).toBeGreaterThan(19_000)
      const after = yield* server.requests
      expect(after.length - before).toBe(1)
      const again = turnRequest(after, "and the DNS fallback?")!
      expect(split(again).system).toContain("<conversation_summary>")
      expect(countTokens(requestText(again))).toBeLessThanOrEqual(maxContextTokens)
    })), 120_000)
})

describe("auto-recall, now that the context trims", () => {
  it.live("a question about something trimmed long ago brings it back as a <recall> block (the raw window is not recalled)", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({ fallback: FakeReply.text("We went over the router settings again.") })
      yield* server.embeddings({ bagOfWords: { dimensions: 512 } })
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, {
        ".kern/config.json": JSON.stringify({
          provider: "openai",
          model: "test-model",
          baseURL: server.baseURL,
          embeddingModel: "test-embedding",
          maxContextTokens: 12_000,
          autoRecall: true
        })
      })
      // One old exchange about the key, then 2,000 messages about the router.
      const path = writeSessionFixture(dir, 2_000)
      const [headerLine, ...rest] = NodeFs.readFileSync(path, "utf8").split("\n")
      const old = [
        { _tag: "user", text: "remember: the spare key is under the blue flowerpot by the shed", at: "2026-11-01T10:00:00.000Z" },
        { _tag: "assistant", text: "Noted: spare key, blue flowerpot, by the shed.", toolCalls: [], at: "2026-11-01T10:00:01.000Z" }
      ].map((line) => JSON.stringify(line))
      NodeFs.writeFileSync(path, [headerLine, ...old, ...rest].join("\n"))

      const result = yield* Effect.gen(function*() {
        // As the running agent's backfill leaves it: every chunk indexed and embedded.
        yield* Effect.flatMap(Recall, (recall) => recall.backfill)
        return yield* operatorTurn("where is the spare key, under which flowerpot?")
      }).pipe(Effect.provide(testRuntime(dir)))
      expect(result.outcome.failure).toBeUndefined()
      const recalled = result.events.find((e) => e.type === "recall")
      expect(recalled).toBeDefined()
      expect(recalled?.type === "recall" ? recalled.hits : 0).toBeGreaterThan(0)
      const request = turnRequest(yield* server.requests, "where is the spare key")!
      expect(JSON.stringify(request.body)).toContain("<recall note=")
      expect(JSON.stringify(request.body)).toContain("blue flowerpot")
    })), 120_000)
})
