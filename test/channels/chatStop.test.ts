import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FakeReply, make as makeFakeModel } from "../support/fakeModelServer.js"
import * as FakeSlack from "../support/fakeSlack.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"
import { agentFolder as slackFolder, pairUser, startSlackAgent, textOf } from "./slack/harness.js"
import { agentFolder, pair, startAgent } from "./telegram/harness.js"

// `/stop` from a chat: it ends the running turn of that chat when it is the sender's (or the sender is an operator),
// never reaches the model, and the chat is told what happened.

const alice = { id: 42, first_name: "Alice", username: "alice" }
const bob = { id: 43, first_name: "Bob", username: "bob" }
const carol = { id: 44, first_name: "Carol", username: "carol" }
const group = { chatId: -1001, chatType: "supergroup" as const }

describe("/stop in Telegram", () => {
  it.scopedLive("in a group: someone else's /stop is refused, an operator's stops the turn; nothing reaches the model", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model), telegram)
      yield* pair(agent, alice)
      yield* pair(agent, bob)
      yield* pair(agent, carol, true)
      yield* model.reply(FakeReply.text("Counting: one, two, three, four", { hangAfter: 3 }))

      yield* telegram.message({ ...group, from: alice, text: "@kern_test_bot count to a million" })
      yield* model.awaitRequests(1)
      yield* telegram.message({ ...group, from: bob, text: "/stop@kern_test_bot" })
      yield* telegram.awaitChat(group.chatId, (messages) => messages.some((m) => m.text.includes("someone else's")))
      yield* telegram.message({ ...group, from: carol, text: "@kern_test_bot /stop" })
      const chat = yield* telegram.awaitChat(group.chatId, (messages) =>
        messages.some((m) => m.text === "Stopping.") && messages.some((m) => m.text.includes("Stopped.")))
      // Alice's turn kept what it had said, and says it was stopped, not that something went wrong.
      expect(chat.find((m) => m.text.includes("Stopped."))!.text).toContain("Counting")
      expect(chat.map((m) => m.text).join("\n")).not.toContain("went wrong")
      expect(yield* model.modelRequests).toHaveLength(1)
      expect(JSON.stringify((yield* model.modelRequests).map((r) => r.body))).not.toContain("/stop")
      expect(yield* agent.inbox.size).toBe(0)

      // Alone in her chat with nothing running, /stop says so.
      yield* telegram.message({ from: alice, text: "/stop" })
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "Nothing is running here to stop."))
      yield* agent.stop
    }))
})

describe("/stop in Slack", () => {
  it.scopedLive("a user's /stop in their DM stops their running turn and is answered there", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: slackFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* model.reply(FakeReply.text("Let me write you a long essay about it", { hangAfter: 3 }))
      yield* slack.awaitConnections(1)

      yield* slack.dm("U1", "write an essay")
      yield* model.awaitRequests(1)
      yield* slack.dm("U1", "/stop")
      yield* slack.awaitCall("chat.postMessage", (call) => textOf(call) === "Stopping.")
      yield* slack.awaitAnyCall((call) => (call.method === "chat.update" || call.method === "chat.postMessage") && textOf(call).includes("Stopped."))
      expect(yield* model.modelRequests).toHaveLength(1)
      expect(yield* agent.inbox.size).toBe(0)
    }))
})
