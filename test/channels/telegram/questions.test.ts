import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import { type BotMessage, make as makeFakeTelegram } from "../../support/fakeTelegram.js"
import { offeredTools, toolResultsById } from "../../support/modelRequests.js"
import { agentFolder, pair, startAgent } from "./harness.js"

const alice = { id: 42, first_name: "Alice" }
const bob = { id: 43, first_name: "Bob" }
const group = { chatId: -1001, chatType: "group" as const }

const isQuestion = (m: BotMessage) => m.text.startsWith("❓")
const ask = (args: Record<string, unknown>) => FakeReply.toolCalls([{ id: "q1", name: "ask_user_question", args }])

describe("Telegram questions (ask_user_question)", () => {
  it.scopedLive("the options are buttons; a friend's press in the group is refused, the asker's answers", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model), telegram)
      yield* pair(agent, alice)
      yield* pair(agent, bob)
      yield* model.reply(ask({ question: "Which <branch>?", options: ["main", "staging"] }), FakeReply.text("Staging it is."))

      yield* telegram.message({ ...group, from: alice, text: "@kern_test_bot deploy" })
      const [prompt] = (yield* telegram.awaitChat(-1001, (messages) => messages.some(isQuestion))).filter(isQuestion)
      const [pending] = yield* agent.questions.pending
      expect(pending!.origin).toMatchObject({ interface: "telegram", channel: "-1001", userId: "42" })
      const [first] = yield* model.awaitRequests(1)
      expect(offeredTools(first!.body)).toContain("ask_user_question")
      expect(prompt!.text).toContain("Which &lt;branch&gt;?")
      expect(prompt!.replyMarkup).toEqual({
        inline_keyboard: [
          [{ text: "main", callback_data: `qa:${pending!.id}:0` }],
          [{ text: "staging", callback_data: `qa:${pending!.id}:1` }]
        ]
      })

      // Bob is paired and in the group, but the question is Alice's.
      yield* telegram.press({ from: bob, message: prompt!, data: `qa:${pending!.id}:0`, id: "press-bob" })
      const [refused] = yield* telegram.awaitCalls("answerCallbackQuery", 1)
      expect(refused!.body).toMatchObject({ callback_query_id: "press-bob", show_alert: true })
      expect(String(refused!.body["text"])).toContain("asked of telegram:42")
      expect((yield* agent.questions.pending).map((q) => q.id)).toEqual([pending!.id])

      yield* telegram.press({ from: alice, message: prompt!, data: `qa:${pending!.id}:1`, id: "press-alice" })
      const answers = yield* telegram.awaitCalls("answerCallbackQuery", 2)
      expect(answers[1]!.body).toMatchObject({ callback_query_id: "press-alice", text: "Answered", show_alert: false })
      yield* telegram.awaitChat(-1001, (messages) => messages.some((m) => m.text === "Staging it is."))
      const [, second] = yield* model.awaitRequests(2)
      expect(Object.values(toolResultsById(second!.body)).join("\n")).toContain("answer from telegram:42: chose \"staging\"")
      const done = (yield* telegram.chat(-1001)).find(isQuestion)!
      expect(done.text).toContain("✅ staging")
      expect(done.replyMarkup).toEqual({ inline_keyboard: [] })
      yield* agent.stop
    }))

  it.scopedLive("several choices are ticked, then Done; a free-text question takes the asker's next message", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model), telegram)
      yield* pair(agent, alice)
      yield* model.reply(
        ask({ question: "Which ones?", options: ["a", "b", "c"], multiSelect: true }),
        FakeReply.text("a and c."),
        ask({ question: "What name?" }),
        FakeReply.text("Named.")
      )
      const chat = alice.id
      yield* telegram.message({ from: alice, text: "pick" })
      const [prompt] = (yield* telegram.awaitChat(chat, (messages) => messages.some(isQuestion))).filter(isQuestion)
      const [pending] = yield* agent.questions.pending
      yield* telegram.press({ from: alice, message: prompt!, data: `qt:${pending!.id}:2` })
      yield* telegram.press({ from: alice, message: prompt!, data: `qt:${pending!.id}:0` })
      yield* telegram.awaitCalls("answerCallbackQuery", 2)
      yield* telegram.press({ from: alice, message: prompt!, data: `qd:${pending!.id}` })
      yield* telegram.awaitChat(chat, (messages) => messages.some((m) => m.text === "a and c."))
      const [, second] = yield* model.awaitRequests(2)
      expect(Object.values(toolResultsById(second!.body)).join("\n")).toContain("chose \"a\", \"c\"")

      yield* telegram.message({ from: alice, text: "name it" })
      yield* telegram.awaitChat(chat, (messages) => messages.filter(isQuestion).length === 2)
      yield* telegram.message({ from: alice, text: "Orion" })
      yield* telegram.awaitChat(chat, (messages) => messages.some((m) => m.text === "Named."))
      const requests = yield* model.awaitRequests(4)
      expect(Object.values(toolResultsById(requests[3]!.body)).join("\n")).toContain("wrote \"Orion\"")
      // The answer was not a message of its own: four model requests, two turns.
      expect(requests).toHaveLength(4)
      yield* agent.stop
    }))
})
