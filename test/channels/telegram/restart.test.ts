import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Option } from "effect"
import { AgentRuntime } from "../../../src/runtime/AgentRuntime.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import { Failures, make as makeFakeTelegram } from "../../support/fakeTelegram.js"
import { interruptedText } from "../../../src/channels/leftoverReplies.js"
import { agentFolder, awaitPlaceholders, pair, startAgent } from "./harness.js"

const alice = { id: 42, first_name: "Alice" }
const bob = { id: 43, first_name: "Bob" }

describe("Telegram channel across restarts", () => {
  it.scopedLive("a kill between receiving an update and queueing it loses nothing: the next start takes it again, once", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model)
      const reached = yield* Deferred.make<void>()
      // The first agent dies at the moment its channel hands the update to the runtime.
      const first = yield* startAgent(dir, telegram, {
        wrapRuntime: (runtime) =>
          AgentRuntime.make({ ...runtime, submit: () => Effect.zipRight(Deferred.succeed(reached, undefined), Effect.never) })
      })
      yield* pair(first, alice)
      const updateId = yield* telegram.message({ from: alice, text: "remember the milk" })
      yield* Deferred.await(reached)
      expect(yield* first.inbox.size).toBe(0)
      expect(yield* first.inbox.cursor("telegram:offset")).toEqual(Option.none())
      yield* first.stop
      expect(yield* telegram.unconfirmed).toEqual([updateId])

      yield* model.reply(FakeReply.text("Noted: milk."))
      const second = yield* startAgent(dir, telegram)
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "Noted: milk."))
      yield* second.stop

      // A third start polls past the update and answers nothing again.
      const polled = (yield* telegram.calls("getUpdates")).length
      const third = yield* startAgent(dir, telegram)
      const polls = yield* telegram.awaitCalls("getUpdates", polled + 1)
      expect(polls.at(-1)!.body["offset"]).toBe(updateId + 1)
      expect(yield* third.inbox.size).toBe(0)
      yield* third.stop
      const requests = yield* model.modelRequests
      expect(requests.length).toBe(1)
      expect(JSON.stringify(requests[0]!.body)).toContain("remember the milk")
      expect((yield* telegram.chat(alice.id)).filter((m) => m.text === "Noted: milk.").length).toBe(1)
    }))

  it.scopedLive("a kill while the message waits in the queue: the next start answers it from the inbox and Telegram does not send it again", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model)
      // This agent accepts messages but never serves its queue.
      const first = yield* startAgent(dir, telegram, { serve: false })
      yield* pair(first, alice)
      const updateId = yield* telegram.message({ from: alice, text: "what is on today?" })
      // The poll after the update carries the next offset: the message is in kern.db by then.
      yield* telegram.awaitCalls("getUpdates", 2)
      expect(yield* first.inbox.size).toBe(1)
      yield* first.stop

      yield* model.reply(FakeReply.text("Nothing planned."))
      const second = yield* startAgent(dir, telegram)
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "Nothing planned."))
      const polls = (yield* telegram.calls("getUpdates")).slice(2)
      expect(polls[0]!.body["offset"]).toBe(updateId + 1)
      expect(yield* second.inbox.size).toBe(0)
      yield* second.stop
      expect((yield* model.modelRequests).length).toBe(1)
    }))

  it.scopedLive("a kill mid-turn: the message is in the session, and the next start neither takes it again from Telegram nor answers it twice", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model)
      const first = yield* startAgent(dir, telegram)
      yield* pair(first, alice)
      yield* model.reply(FakeReply.text("too late", { delay: "60 seconds" }))
      const updateId = yield* telegram.message({ from: alice, text: "first question" })
      yield* model.awaitRequests(1)
      yield* first.stop

      yield* model.reply(FakeReply.text("second answer"))
      const second = yield* startAgent(dir, telegram)
      const polled = (yield* telegram.calls("getUpdates")).length
      yield* telegram.message({ from: alice, text: "second question" })
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "second answer"))
      expect((yield* telegram.calls("getUpdates"))[polled]!.body["offset"]).toBe(updateId + 1)
      const requests = yield* model.modelRequests
      expect(requests.length).toBe(2)
      const body = JSON.stringify(requests[1]!.body)
      expect(body.split("first question").length - 1).toBe(1)
      expect(body).toContain("second question")
      yield* second.stop
    }))

  it.scopedLive("a kill mid-turn leaves no placeholder behind: the next start edits it, once, to say the turn was interrupted", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model)
      const first = yield* startAgent(dir, telegram)
      yield* pair(first, alice)
      yield* model.reply(FakeReply.text("too late", { delay: "60 seconds" }))
      yield* telegram.message({ from: alice, text: "a long question" })
      yield* model.awaitRequests(1)
      yield* awaitPlaceholders(first, 1)
      yield* first.stop
      const [placeholder] = yield* telegram.chat(alice.id)
      expect(placeholder?.text).toBe("…")

      const second = yield* startAgent(dir, telegram)
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text.includes(interruptedText)))
      yield* second.stop
      const third = yield* startAgent(dir, telegram)
      yield* telegram.awaitCalls("getUpdates", (yield* telegram.calls("getUpdates")).length + 1)
      yield* third.stop

      const edits = (yield* telegram.calls("editMessageText")).filter((c) => c.body["message_id"] === placeholder?.messageId)
      expect(edits).toHaveLength(1)
      const chat = yield* telegram.chat(alice.id)
      expect(chat.map((m) => m.text)).toEqual([`⚠ ${interruptedText}`])
      expect((yield* model.modelRequests).length).toBe(1)
    }))

  it.scopedLive("a reply saved in the session but killed before it reached the chat is delivered by the next start, once", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model)
      const first = yield* startAgent(dir, telegram)
      yield* pair(first, alice)
      yield* model.reply(FakeReply.text("The saved answer."))
      // The reply's edit fails (Telegram down): the agent dies while it waits to try again.
      yield* telegram.fail("editMessageText", { status: 502, description: "Bad Gateway" })
      yield* telegram.message({ from: alice, text: "a question" })
      yield* telegram.awaitCalls("editMessageText", 1)
      yield* first.stop
      const [placeholder] = yield* telegram.chat(alice.id)
      expect(placeholder?.text).toBe("…")

      const second = yield* startAgent(dir, telegram)
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "The saved answer."))
      yield* second.stop
      const third = yield* startAgent(dir, telegram)
      yield* telegram.awaitCalls("getUpdates", (yield* telegram.calls("getUpdates")).length + 1)
      yield* third.stop

      const edits = (yield* telegram.calls("editMessageText")).filter((c) => c.body["message_id"] === placeholder?.messageId)
      // The one that failed before the kill, the one after it.
      expect(edits).toHaveLength(2)
      expect((yield* telegram.chat(alice.id)).map((m) => m.text)).toEqual(["The saved answer."])
      expect((yield* model.modelRequests).length).toBe(1)
    }))

  it.scopedLive("a saved reply left undelivered by a kill goes to its own chat: a later turn's reply (another person's) is never taken for it", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model)
      const first = yield* startAgent(dir, telegram)
      yield* pair(first, alice)
      yield* pair(first, bob)
      yield* model.reply(FakeReply.text("For Alice only."), FakeReply.text("For Bob only."))
      // Alice's reply waits out a long rate limit; Bob's turn runs after hers and reaches him; then the agent dies.
      yield* telegram.fail("editMessageText", Failures.rateLimited(600))
      yield* telegram.message({ from: alice, text: "alice asks" })
      yield* telegram.awaitCalls("editMessageText", 1)
      yield* telegram.message({ from: bob, text: "bob asks" })
      yield* telegram.awaitChat(bob.id, (messages) => messages.some((m) => m.text === "For Bob only."))
      yield* first.stop
      expect((yield* telegram.chat(alice.id)).map((m) => m.text)).toEqual(["…"])

      const second = yield* startAgent(dir, telegram)
      const chat = yield* telegram.awaitChat(alice.id, (messages) => messages.every((m) => m.text !== "…"))
      yield* second.stop
      expect(chat.map((m) => m.text)).toEqual(["For Alice only."])
      expect((yield* telegram.chat(bob.id)).map((m) => m.text)).toEqual(["For Bob only."])
    }))
})
