import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import { type BotMessage, make as makeFakeTelegram } from "../../support/fakeTelegram.js"
import { agentFolder, pair, startAgent } from "./harness.js"

const alice = { id: 42, first_name: "Alice" }
const providerKey = "sk-or-v1-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
const isPrompt = (m: BotMessage) => m.text.includes("Approval needed")

describe("Telegram: no known secret in what kern sends the Bot API", () => {
  it.scopedLive("the model's reply and a call's arguments (in the approval prompt) reach Telegram as [redacted:NAME]", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model, { approvalMode: "ask" })
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", ".env"), `OPENROUTER_API_KEY=${providerKey}\n`, { mode: 0o600 })
      const agent = yield* startAgent(dir, telegram)
      yield* pair(agent, alice, true)
      // The bot's own token is a secret kern knows too (it travels in the URL, to Telegram, and nowhere else).
      const known = [providerKey, telegram.token]
      yield* model.reply(
        FakeReply.toolCalls(
          [{ id: "w1", name: "write", args: { path: "AGENTS.md", content: `key ${providerKey}, bot ${telegram.token}` } }],
          { text: `Noting ${providerKey} down. ` }
        ),
        FakeReply.text(`The key is ${providerKey} and the bot token ${telegram.token}. Not written.`)
      )
      yield* telegram.message({ from: alice, text: "note the key down" })
      const [prompt] = (yield* telegram.awaitChat(42, (messages) => messages.some(isPrompt))).filter(isPrompt)
      expect(prompt!.text).toContain("key [redacted:OPENROUTER_API_KEY], bot [redacted:TELEGRAM_BOT_TOKEN]")
      const [pending] = yield* agent.approvals.pending
      yield* telegram.press({ from: alice, message: prompt!, data: `deny:${pending!.id}` })
      const chat = yield* telegram.awaitChat(42, (messages) => messages.some((m) => m.text.includes("Not written.")))
      expect(chat.map((m) => m.text).join("\n")).toContain(
        "The key is [redacted:OPENROUTER_API_KEY] and the bot token [redacted:TELEGRAM_BOT_TOKEN]. Not written."
      )
      const calls = yield* telegram.calls()
      expect(calls.length).toBeGreaterThan(0)
      for (const call of calls) {
        const body = JSON.stringify(call.body)
        for (const value of known) expect(body.includes(value), `${call.method} carries ${value.slice(0, 8)}…`).toBe(false)
      }
      yield* agent.stop
    }))
})
