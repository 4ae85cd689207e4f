import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { denyAction } from "../../../src/channels/slack/approvalMessages.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import * as FakeSlack from "../../support/fakeSlack.js"
import { agentFolder, awaitReply, pairUser, startSlackAgent } from "./harness.js"

const providerKey = "sk-or-v1-9f8e7d6c5b4a39281706f5e4d3c2b1a0"

describe("Slack: no known secret in what kern sends the Web API", () => {
  it.scoped("the model's reply and a call's arguments (in the approval message) reach Slack as [redacted:NAME]", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const dir = agentFolder(model, { approvalMode: "ask" })
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", ".env"), `OPENROUTER_API_KEY=${providerKey}\n`, { mode: 0o600 })
      const agent = yield* startSlackAgent({ dir, slack })
      yield* pairUser(agent.pairings, "U1", "operator")
      // The bot's own token is a secret kern knows too (it travels in the Authorization header, to Slack only).
      const known = [providerKey, slack.botToken, slack.appToken]
      yield* model.reply(
        FakeReply.toolCalls(
          [{ id: "w1", name: "write", args: { path: "AGENTS.md", content: `key ${providerKey}, bot ${slack.botToken}` } }],
          { text: `Noting ${providerKey} down. ` }
        ),
        FakeReply.text(`The key is ${providerKey} and the bot token ${slack.botToken}. Not written.`)
      )
      yield* slack.awaitConnections(1)
      yield* slack.dm("U1", "note the key down")
      const request = yield* slack.awaitCall("chat.postMessage", (call) => call.body["blocks"] !== undefined)
      expect(JSON.stringify(request.body["blocks"])).toContain("key [redacted:OPENROUTER_API_KEY], bot [redacted:SLACK_BOT_TOKEN]")
      const [pending] = yield* agent.approvals.pending
      const requestTs = (yield* slack.posted).find((message) => message.blocks !== undefined)!.ts
      yield* slack.click("U1", denyAction, pending!.id, "DU1", requestTs)
      yield* awaitReply(slack, "The key is [redacted:OPENROUTER_API_KEY] and the bot token [redacted:SLACK_BOT_TOKEN]. Not written.")
      const calls = yield* slack.calls
      expect(calls.length).toBeGreaterThan(0)
      for (const call of calls) {
        const body = JSON.stringify(call.body)
        for (const value of known) expect(body.includes(value), `${call.method} carries ${value.slice(0, 8)}…`).toBe(false)
      }
    }))
})
