import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { make as makeFakeModel } from "../support/fakeModelServer.js"
import * as FakeSlack from "../support/fakeSlack.js"
import { seedSpend, today } from "../support/spendRows.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"
import { agentFolder as slackFolder, pairUser, startSlackAgent, textOf } from "./slack/harness.js"
import { agentFolder, pair, startAgent } from "./telegram/harness.js"

// `/usage` from a chat: a paired user sees their own spend today against the caps that apply to them (perUser, their
// chat's perChannel), never the agent's total nor another person's; an operator sees the whole day. It never reaches
// the model.

const limits = { perUser: { usdCents: 50, tokens: 100000 }, perChannel: { tokens: 2000 } }

const alice = { id: 42, first_name: "Alice", username: "alice" }
const bob = { id: 43, first_name: "Bob", username: "bob" }
const carol = { id: 44, first_name: "Carol", username: "carol" }
const group = { chatId: -1001, chatType: "supergroup" as const }

describe("/usage in Telegram", () => {
  it.scopedLive("a user sees their own spend against perUser and their chat's perChannel; an operator the whole day, privately", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model, { limits }), telegram)
      yield* pair(agent, alice)
      yield* pair(agent, bob)
      yield* pair(agent, carol, true)
      yield* seedSpend(agent.sql, today(), [
        ["agent", "", 9000, 1000, 12.5],
        ["user", "telegram:42", 1000, 200, 3],
        ["channel", "telegram:42", 1000, 200, 3],
        ["user", "telegram:43", 4000, 1000, 7],
        ["channel", "telegram:43", 4000, 1000, 7],
        // Sixty more people over their perUser tokens: the operator's whole day outgrows one Telegram message.
        ...Array.from({ length: 60 }, (_, i) => ["user", `telegram:${9000 + i}`, 150000, 0, 0.5] as const)
      ])
      const day = today()

      yield* telegram.message({ from: alice, text: "/usage" })
      const aliceChat = yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text.includes("Your spend today")))
      const aliceAnswer = aliceChat.find((m) => m.text.includes("Your spend today"))!.text
      expect(aliceAnswer).toContain(`Your spend today (${day}): 3.00¢ of 50¢, 1200 of 100000 tokens (your daily cap).`)
      expect(aliceAnswer).toContain("This chat today: 3.00¢, 1200 of 2000 tokens (its daily cap).")
      // Neither the agent's total nor Bob's figures.
      expect(aliceAnswer).not.toMatch(/12\.50|7\.00|\b10000\b|\b5000\b|telegram:43|Reached/)

      // Bob's chat is over its perChannel cap: he is told which cap and what it means.
      yield* telegram.message({ from: bob, text: "/usage@kern_test_bot" })
      const bobChat = yield* telegram.awaitChat(bob.id, (messages) => messages.some((m) => m.text.includes("Your spend today")))
      const bobAnswer = bobChat.find((m) => m.text.includes("Your spend today"))!.text
      expect(bobAnswer).toContain("7.00¢ of 50¢, 5000 of 100000 tokens")
      expect(bobAnswer).toContain("Reached: limits.perChannel.tokens")
      expect(bobAnswer).not.toMatch(/12\.50|3\.00|telegram:42/)

      // Carol, an operator, in a group: the group would read what she is told, so she gets her own figures alone.
      yield* telegram.message({ ...group, from: carol, text: "/usage@kern_test_bot" })
      const groupChat = yield* telegram.awaitChat(group.chatId, (messages) => messages.some((m) => m.text.includes("Your spend today")))
      const groupAnswer = groupChat.find((m) => m.text.includes("Your spend today"))!.text
      expect(groupAnswer).toContain("0.00¢ of 50¢, 0 of 100000 tokens (your daily cap).")
      expect(groupAnswer).toContain("This chat today: 0.00¢, 0 of 2000 tokens")
      expect(groupAnswer).toContain("/usage in a private chat with me, or kern status")
      expect(groupAnswer).not.toMatch(/12\.50|7\.00|3\.00|telegram:4[23]/)

      // Carol, an operator, sees the whole day: the agent's total against perDay, and each person and chat.
      yield* telegram.message({ from: carol, text: "/usage" })
      const carolChat = yield* telegram.awaitChat(carol.id, (messages) =>
        messages.some((m) => m.text.includes("REACHED: limits.perChannel.tokens 2000 tokens for telegram:43")))
      // In pieces Telegram takes (at most 4096 characters each), in order: all of it.
      expect(carolChat.length).toBeGreaterThan(1)
      for (const message of carolChat) expect(message.text.length).toBeLessThanOrEqual(4096)
      const carolAnswer = carolChat.map((m) => m.text).join("\n")
      expect(carolAnswer).toMatch(/^Today's spend of the whole agent/)
      expect(carolAnswer).toContain("REACHED: limits.perUser.tokens 100000 tokens for telegram:9059 (150000 tokens spent)")
      expect(carolAnswer).toContain(`today ${day}: 12.50¢, 10000 tokens (no perDay cap)`)
      expect(carolAnswer).toContain("telegram:42 3.00¢ of 50¢, 1200 of 100000 tokens")
      expect(carolAnswer).toContain("telegram:43 7.00¢ of 50¢, 5000 of 100000 tokens")
      expect(carolAnswer).toContain("REACHED: limits.perChannel.tokens 2000 tokens for telegram:43")

      // Commands to kern: nothing was queued, nothing reached the model.
      expect(yield* model.modelRequests).toHaveLength(0)
      expect(yield* agent.inbox.size).toBe(0)
      yield* agent.stop
    }))
})

describe("/usage in Slack", () => {
  it.scopedLive("a user's /usage in their DM shows their spend, an operator's the whole day", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: slackFolder(model, { limits: { perUser: { usdCents: 20 } } }), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* pairUser(agent.pairings, "U2", "operator")
      yield* seedSpend(agent.sql, today(), [
        ["agent", "", 3000, 300, 9],
        ["user", "slack:U1", 1000, 100, 2.25],
        ["channel", "slack:DU1", 1000, 100, 2.25],
        ["user", "slack:U3", 2000, 200, 6.75],
        ["channel", "slack:DU3", 2000, 200, 6.75]
      ])
      yield* slack.awaitConnections(1)

      yield* slack.dm("U1", "/usage")
      const answer = yield* slack.awaitCall("chat.postMessage", (call) => textOf(call).startsWith("Your spend today"))
      expect(answer.body["channel"]).toBe("DU1")
      expect(textOf(answer)).toContain("2.25¢ of 20¢, 1100 tokens (your daily cap).")
      // No perChannel cap: the chat's line is left out; nobody else's figures.
      expect(textOf(answer)).not.toMatch(/This chat|9\.00|6\.75|U3/)

      yield* slack.dm("U2", "/usage")
      const whole = yield* slack.awaitCall("chat.postMessage", (call) => textOf(call).includes("whole agent"))
      expect(whole.body["channel"]).toBe("DU2")
      expect(textOf(whole)).toContain("9.00¢, 3300 tokens")
      expect(textOf(whole)).toContain("slack:U3 6.75¢ of 20¢")

      expect(yield* model.modelRequests).toHaveLength(0)
      expect(yield* agent.inbox.size).toBe(0)
    }))
})
