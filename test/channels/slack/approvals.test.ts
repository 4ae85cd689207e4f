import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { approveAction, denyAction } from "../../../src/channels/slack/approvalMessages.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import * as FakeSlack from "../../support/fakeSlack.js"
import { agentFolder, awaitReply, pairUser, startSlackAgent, textOf } from "./harness.js"

const blocksOf = (call: { readonly body: Readonly<Record<string, unknown>> }) => JSON.stringify(call.body["blocks"] ?? null)

/** The approval request kern posted (the message with buttons). */
const awaitRequestMessage = (slack: FakeSlack.FakeSlack) =>
  slack.awaitCall("chat.postMessage", (call) => call.body["blocks"] !== undefined)

const bashCall = (command: string) => FakeReply.toolCalls([{ id: "call_1", name: "bash", args: { command } }])

describe("Slack approvals", () => {
  it.scoped("a DESTRUCTIVE call from a Slack turn shows its full arguments with buttons; a paired non-operator's click is refused, the operator's approves", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model, { approvalMode: "ask" }), slack })
      yield* pairUser(agent.pairings, "U1", "operator")
      yield* pairUser(agent.pairings, "U2")
      yield* model.reply(bashCall("echo approved-$((40+2)) && echo '<b>&'"), FakeReply.text("Ran it."))
      yield* slack.awaitConnections(1)

      yield* slack.dm("U1", "run the check")
      const request = yield* awaitRequestMessage(slack)
      const [pending] = yield* agent.approvals.pending
      expect(request.body["channel"]).toBe("DU1")
      const blocks = blocksOf(request)
      expect(blocks).toContain("`bash`")
      expect(blocks).toContain("echo approved-$((40+2)) &amp;&amp; echo '&lt;b&gt;&amp;'")
      expect(blocks).toContain(approveAction)
      expect(blocks).toContain(denyAction)
      expect(blocks).toContain(`"value":"${pending!.id}"`)
      const requestTs = (yield* slack.posted).find((message) => message.blocks !== undefined)!.ts

      // U2 is paired but not an operator: told so, privately; the call still waits.
      const refused = yield* slack.click("U2", approveAction, pending!.id, "DU1", requestTs)
      yield* slack.awaitAck(refused)
      const [ephemeral] = yield* slack.awaitCalls("chat.postEphemeral", 1)
      expect(ephemeral!.body).toMatchObject({ channel: "DU1", user: "U2" })
      expect(textOf(ephemeral!)).toContain("not an operator")
      expect((yield* agent.approvals.pending).map((p) => p.id)).toEqual([pending!.id])
      expect(yield* model.modelRequests).toHaveLength(1)

      yield* slack.click("U1", approveAction, pending!.id, "DU1", requestTs)
      const settled = yield* slack.awaitCall("chat.update", (call) => call.body["ts"] === requestTs)
      const settledBlocks = blocksOf(settled)
      expect(settledBlocks).toContain("Approved by slack:U1")
      expect(settledBlocks).not.toContain(approveAction)
      expect(settledBlocks).toContain("echo approved-$((40+2))")
      const [, second] = yield* model.awaitRequests(2)
      // The command ran: its output (not its text) is in the next model request.
      expect(JSON.stringify(second!.body)).toContain("approved-42")
      yield* awaitReply(slack, "Ran it.")
    }))

  it.scoped("an approval nobody answers times out; its message then says so, without buttons, and the call did not run", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model, { approvalMode: "ask", approvalTimeout: 30 }), slack })
      yield* pairUser(agent.pairings, "U1", "operator")
      yield* model.reply(bashCall("echo not-run-$((6+1))"), FakeReply.text("It was not approved."))
      yield* slack.awaitConnections(1)

      const mention = yield* slack.mention("U1", "C3", "run it")
      const request = yield* awaitRequestMessage(slack)
      const rootTs = (mention.payload as { readonly event: { readonly ts: string } }).event.ts
      // In the mention's thread.
      expect(request.body).toMatchObject({ channel: "C3", thread_ts: rootTs })
      yield* TestClock.adjust("30 seconds")
      const settled = yield* slack.awaitCall("chat.update", (call) => call.body["blocks"] !== undefined)
      expect(blocksOf(settled)).toContain("Nobody answered in time")
      expect(blocksOf(settled)).not.toContain(approveAction)
      const [, second] = yield* model.awaitRequests(2)
      expect(JSON.stringify(second!.body)).toContain("nobody answered within 30 s")
      expect(JSON.stringify(second!.body)).not.toContain("not-run-7")
      yield* awaitReply(slack, "It was not approved.")
    }))
})
