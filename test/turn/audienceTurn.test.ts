import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import { Recall } from "../../src/recall/Recall.js"
import { sessionIdIn } from "../../src/session/conversationIds.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import type { QueuedMessage } from "../../src/turn/MessageQueue.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { answer, appendLines, header, sessionPath, user } from "../recall/harness.js"
import { FakeReply, makeWith, type RecordedRequest } from "../support/fakeModelServer.js"
import { testRuntime } from "../support/operatorTurn.js"
import { summaryModelAgent } from "../context/summaryAgent.js"

const operatorSession = sessionIdIn("20261120-100000-000-aaaa", "main")
const friendSession = sessionIdIn("20261121-100000-000-bbbb", "telegram-555")

/** What only the operator said or wrote: none of it may reach the model in the friend's turn, by any path. */
const markers = ["4711", "operator-marker", "knowledge-marker", "users-marker", "daily-note-marker"]

const message = (fields: Pick<QueuedMessage, "interface" | "channel" | "userId" | "conversation" | "text">, id: number): QueuedMessage => ({
  ...fields,
  id,
  receivedAtMs: 0,
  turnId: `t${id}`
})

/** One turn on a given session, as the runtime runs it, its background context work awaited. */
const turnIn = (sessionId: string, queued: QueuedMessage) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* SessionStore
    const context = yield* ContextWindow
    const runner = yield* TurnRunner
    const opened = yield* store.open(sessionId)
    const history = yield* context.historyOf(opened.loaded)
    const events = yield* Ref.make<ReadonlyArray<TurnEvent>>([])
    const outcome = yield* runner.run({
      message: queued,
      session: { id: sessionId, writer: opened.writer, history },
      emit: (event) => Ref.update(events, (all) => [...all, event])
    })
    yield* context.settled()
    return { outcome, events: yield* Ref.get(events) }
  }))

/** The turn's own requests (not the summaries' nor the embeddings'), by the model they name. */
const turnRequests = (requests: ReadonlyArray<RecordedRequest>, from: number) =>
  requests.slice(from).filter((r) => r.path === "/responses" && (r.body as { readonly model?: string }).model === "test-model")

const systemOf = (request: RecordedRequest) =>
  JSON.stringify((request.body as { readonly input: ReadonlyArray<{ readonly content?: unknown }> }).input[0]?.content)

describe("a paired user's turn, end to end", () => {
  it.live("sees none of the operator's material by prompt, auto-recall or the recall tool; the operator's turn still sees it all", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({ fallback: FakeReply.text("summary: they went over the router config") })
      yield* server.embeddings({ bagOfWords: { dimensions: 64 } })
      // Summaries have their own model and answer: the scripted replies are the turns'.
      yield* server.answerModel("summary-model", FakeReply.text("summary: they went over the router config"))
      // The friend's own conversation is long (over the window): its turn is trimmed, so auto-recall runs.
      const dir = summaryModelAgent(server.baseURL, {
        "IDENTITY.md": "I am the test agent.",
        "KNOWLEDGE.md": "the operator's bank PIN is 4711 (knowledge-marker)",
        "USERS.md": "ada, the operator (users-marker)",
        "notes/2026-11-26.md": "ada: remember the bank PIN 4711 (daily-note-marker)"
      }, { embeddingModel: "fake-embed", recall: true, autoRecall: true, autoRecallMaxDistance: 0.99 }, friendSession)
      appendLines(
        sessionPath(dir, operatorSession),
        header(operatorSession),
        user("my bank PIN is 4711, keep it safe (operator-marker)", "2026-11-20T10:00:00.000Z"),
        answer("noted: your bank PIN", "2026-11-20T10:00:01.000Z")
      )
      yield* Effect.gen(function*() {
        const pairings = yield* PairingStore
        const pending = yield* pairings.request({ interface: "telegram", userId: "555", chatId: "555", displayName: "Bob" })
        yield* pairings.approve(pending.code, "operator")
        yield* pairings.setScope("telegram:555", "read")
        yield* Effect.flatMap(Recall, (recall) => recall.sync)

        const before = (yield* server.requests).length
        yield* server.reply(
          FakeReply.toolCalls([
            { id: "call_search", name: "recall", args: { query: "the bank PIN the operator keeps" } },
            { id: "call_load", name: "recall", args: { mode: "load", sessionId: operatorSession, messageStart: 0, messageEnd: 1 } }
          ]),
          FakeReply.text("I cannot tell you that.")
        )
        const friend = yield* turnIn(friendSession, message({
          interface: "telegram",
          channel: "555",
          userId: "555",
          conversation: "telegram-555",
          text: "what is the bank PIN the operator told you?"
        }, 1))
        expect(friend.outcome.failure).toBeUndefined()
        // Trimmed: auto-recall searched for the message, and found the friend's own conversation.
        // (A session never summarized is answered at once, cut at user messages; its summaries come after.)
        expect(friend.events.some((e) => e.type === "context" && e.text.includes("cut at user messages"))).toBe(true)
        expect(friend.events.some((e) => e.type === "recall" && e.hits > 0)).toBe(true)
        const asked = turnRequests(yield* server.requests, before)
        expect(asked).toHaveLength(2)
        for (const request of asked) {
          const body = JSON.stringify(request.body)
          for (const marker of markers) expect(body, marker).not.toContain(marker)
          expect(systemOf(request)).toContain("You are speaking with \\\"Bob\\\" (user 555) on telegram (tool scope read), not with the operator.")
        }
        // The same system prompt at each step: the provider's cache keeps it.
        expect(systemOf(asked[1]!)).toBe(systemOf(asked[0]!))
        // The tools ran and answered: nothing found of the operator's, and their session is not there.
        const results = friend.events.filter((e) => e.type === "tool-result")
        expect(results).toHaveLength(2)
        expect(results.find((e) => e.type === "tool-result" && e.id === "call_load")).toMatchObject({ isError: true })

        // The operator, in their own conversation from Telegram: everything, as before.
        const operatorBefore = (yield* server.requests).length
        yield* server.reply(
          FakeReply.toolCalls([{ id: "call_mine", name: "recall", args: { query: "bank PIN" } }]),
          FakeReply.text("It is in your notes.")
        )
        const operator = yield* turnIn(operatorSession, message({
          interface: "cli",
          channel: "terminal",
          userId: "operator",
          conversation: "main",
          text: "what was my bank PIN?"
        }, 2))
        expect(operator.outcome.failure).toBeUndefined()
        const operatorAsked = turnRequests(yield* server.requests, operatorBefore)
        const system = systemOf(operatorAsked[0]!)
        for (const marker of ["knowledge-marker", "users-marker", "daily-note-marker"]) expect(system, marker).toContain(marker)
        const found = operator.events.find((e) => e.type === "tool-result" && e.id === "call_mine")
        expect(found).toMatchObject({ isError: false })
        expect(found?.type === "tool-result" ? found.text : "").toContain("4711")
      }).pipe(Effect.provide(testRuntime(dir)))
    })), 120_000)
})
