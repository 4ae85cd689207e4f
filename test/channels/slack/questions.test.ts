import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { pickAction } from "../../../src/channels/slack/QuestionPosts.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import * as FakeSlack from "../../support/fakeSlack.js"
import { offeredTools, toolResultsById } from "../../support/modelRequests.js"
import { agentFolder, awaitReply, pairUser, startSlackAgent, textOf } from "./harness.js"

const blocksOf = (call: { readonly body: Readonly<Record<string, unknown>> }) => JSON.stringify(call.body["blocks"] ?? null)
const ask = (args: Record<string, unknown>) => FakeReply.toolCalls([{ id: "call_q", name: "ask_user_question", args }])

describe("Slack questions (ask_user_question)", () => {
  it.scoped("the options are Block Kit buttons in the thread; another paired user's click is refused, the asker's answers", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* pairUser(agent.pairings, "U2")
      yield* model.reply(
        ask({ question: "Which <env>?", options: ["prod", "test"] }),
        FakeReply.text("Test it is."),
        ask({ question: "What name?" }),
        FakeReply.text("Named.")
      )
      yield* slack.awaitConnections(1)

      yield* slack.mention("U1", "C1", "deploy")
      const posted = yield* slack.awaitCall("chat.postMessage", (call) => blocksOf(call).includes(pickAction))
      const [pending] = yield* agent.questions.pending
      expect(pending!.origin).toMatchObject({ interface: "slack", userId: "U1" })
      expect(posted.body["channel"]).toBe("C1")
      expect(posted.body["thread_ts"]).toBeDefined()
      expect(blocksOf(posted)).toContain("Which &lt;env&gt;?")
      expect(blocksOf(posted)).toContain(`"value":"${pending!.id}:1"`)
      const [first] = yield* model.awaitRequests(1)
      expect(offeredTools(first!.body)).toContain("ask_user_question")
      const ts = (yield* slack.posted).find((message) => message.blocks !== undefined)!.ts

      // U2 is paired and in the channel, but the question is U1's: told so, privately.
      const refused = yield* slack.click("U2", pickAction, `${pending!.id}:0`, "C1", ts)
      yield* slack.awaitAck(refused)
      const [ephemeral] = yield* slack.awaitCalls("chat.postEphemeral", 1)
      expect(ephemeral!.body).toMatchObject({ channel: "C1", user: "U2" })
      expect(textOf(ephemeral!)).toContain("asked of slack:U1")
      expect((yield* agent.questions.pending).map((q) => q.id)).toEqual([pending!.id])

      yield* slack.click("U1", pickAction, `${pending!.id}:1`, "C1", ts)
      const settled = yield* slack.awaitCall("chat.update", (call) => call.body["ts"] === ts)
      expect(blocksOf(settled)).toContain(":white_check_mark: test")
      expect(blocksOf(settled)).not.toContain(pickAction)
      const [, second] = yield* model.awaitRequests(2)
      expect(Object.values(toolResultsById(second!.body)).join("\n")).toContain("answer from slack:U1: chose \"test\"")
      yield* awaitReply(slack, "Test it is.")

      // A free-text question in a DM: the asker's next message there is the answer, not a new turn.
      yield* slack.dm("U1", "name it")
      yield* slack.awaitCall("chat.postMessage", (call) => blocksOf(call).includes("What name?"))
      yield* slack.dm("U1", "Orion")
      yield* awaitReply(slack, "Named.")
      const requests = yield* model.awaitRequests(4)
      expect(Object.values(toolResultsById(requests[3]!.body)).join("\n")).toContain("wrote \"Orion\"")
      expect(requests).toHaveLength(4)
    }))
})
