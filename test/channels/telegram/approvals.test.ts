import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ApprovalOrigin, PendingApproval } from "../../../src/runtime/Approvals.js"
import { approvalHtml } from "../../../src/channels/telegram/approvalPrompts.js"
import { visibleText } from "../../../src/channels/telegram/split.js"
import { parseTelegramHtml } from "../../support/fakeTelegramHtml.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import { type BotMessage, make as makeFakeTelegram } from "../../support/fakeTelegram.js"
import { agentFolder, pair, startAgent } from "./harness.js"

const alice = { id: 42, first_name: "Alice" }
const bob = { id: 43, first_name: "Bob" }
const group = { chatId: -1001, chatType: "group" as const }

const isPrompt = (m: BotMessage) => m.text.includes("Approval needed")

describe("Telegram approvals", () => {
  it.scopedLive("a Telegram turn's approval is posted with buttons; a user's press is refused, the operator's decides", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model, { approvalMode: "ask" })
      NodeFs.writeFileSync(NodePath.join(dir, "keep.txt"), "precious\n")
      const agent = yield* startAgent(dir, telegram)
      yield* pair(agent, alice, true)
      yield* pair(agent, bob)
      yield* model.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: "echo '<ok> & done' > approved.txt" } }]),
        FakeReply.text("Done."),
        FakeReply.toolCalls([{ id: "c2", name: "bash", args: { command: "rm keep.txt" } }]),
        FakeReply.text("Not done, as you said.")
      )

      yield* telegram.message({ ...group, from: alice, text: "@kern_test_bot write the file" })
      const [prompt] = (yield* telegram.awaitChat(-1001, (messages) => messages.some(isPrompt))).filter(isPrompt)
      const [pending] = yield* agent.approvals.pending
      expect(pending!.origin).toMatchObject({ interface: "telegram", channel: "-1001", userId: "42" })
      expect(prompt!.parseMode).toBe("HTML")
      expect(prompt!.text).toContain(`<code>bash</code> (${pending!.id})`)
      // The full arguments, escaped, in a <pre>.
      expect(prompt!.text).toContain("<pre>{\n  \"command\": \"echo '&lt;ok&gt; &amp; done' &gt; approved.txt\"\n}</pre>")
      expect(prompt!.replyMarkup).toEqual({
        inline_keyboard: [[
          { text: "✅ Approve", callback_data: `approve:${pending!.id}` },
          { text: "❌ Deny", callback_data: `deny:${pending!.id}` }
        ]]
      })

      // Bob is paired but not an operator: his press is answered with why, and decides nothing.
      yield* telegram.press({ from: bob, message: prompt!, data: `approve:${pending!.id}`, id: "press-bob" })
      const [refused] = yield* telegram.awaitCalls("answerCallbackQuery", 1)
      expect(refused!.body).toMatchObject({ callback_query_id: "press-bob", show_alert: true })
      expect(String(refused!.body["text"])).toContain("telegram:43 is not an operator")
      expect((yield* agent.approvals.pending).map((p) => p.id)).toEqual([pending!.id])

      yield* telegram.press({ from: alice, message: prompt!, data: `approve:${pending!.id}`, id: "press-alice" })
      const answers = yield* telegram.awaitCalls("answerCallbackQuery", 2)
      expect(answers[1]!.body).toMatchObject({ callback_query_id: "press-alice", text: "Approved", show_alert: false })
      yield* telegram.awaitChat(-1001, (messages) => messages.some((m) => m.text === "Done."))
      const decided = (yield* telegram.chat(-1001)).find(isPrompt)!
      expect(decided.text).toContain("✅ <b>Approved</b> by telegram:42")
      expect(decided.replyMarkup).toEqual({ inline_keyboard: [] })
      // A group's turn is the group's conversation, whoever asks: its bash starts in shared/ (conversations per person).
      expect(NodeFs.readFileSync(NodePath.join(dir, "shared/approved.txt"), "utf8")).toBe("<ok> & done\n")

      // The second call is denied by the operator: it does not run.
      yield* telegram.message({ ...group, from: alice, text: "@kern_test_bot now delete keep.txt" })
      const second = (yield* telegram.awaitChat(-1001, (messages) => messages.filter(isPrompt).length === 2)).filter(isPrompt)[1]!
      const [next] = yield* agent.approvals.pending
      yield* telegram.press({ from: alice, message: second, data: `deny:${next!.id}` })
      yield* telegram.awaitChat(-1001, (messages) => messages.some((m) => m.text === "Not done, as you said."))
      const denied = (yield* telegram.chat(-1001)).filter(isPrompt)[1]!
      expect(denied.text).toContain("❌ <b>Denied</b> by telegram:42")
      expect(NodeFs.readFileSync(NodePath.join(dir, "keep.txt"), "utf8")).toBe("precious\n")
      yield* agent.stop
    }))

  it("huge arguments are cut (never inside an entity) with a note, and the prompt stays one valid message", () => {
    const pending = new PendingApproval({
      id: "apr_0123abcd",
      toolId: "write",
      args: { path: "big.txt", content: "<&>".repeat(4000) },
      reason: "write is DESTRUCTIVE",
      origin: new ApprovalOrigin({ interface: "telegram", channel: "42", userId: "42" }),
      runId: "run_1",
      requestedAtMs: 0,
      expiresAtMs: 300_000
    })
    const html = approvalHtml(pending)
    expect(parseTelegramHtml(html).ok).toBe(true)
    expect(visibleText(html).length).toBeLessThanOrEqual(4096)
    expect(html).toMatch(/\(\d+ more characters not shown/)
    expect(html).toContain("Answer within 300 s")
    const shown = /<pre>([\s\S]*)<\/pre>/.exec(html)![1]!
    expect(shown.length).toBeLessThanOrEqual(3000)
    expect(shown).toMatch(/(&lt;|&amp;|&gt;)$/)
  })
})
