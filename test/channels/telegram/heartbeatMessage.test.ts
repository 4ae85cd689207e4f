import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { heartbeatPrompt } from "../../../src/runtime/heartbeat.js"
import { heartbeatInterface } from "../../../src/turn/MessageQueue.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import { make as makeFakeTelegram } from "../../support/fakeTelegram.js"
import { toolResultsById } from "../../support/modelRequests.js"
import { agentFolder, pair, startAgent } from "./harness.js"

const alice = { id: 42, first_name: "Alice" }
const bob = { id: 43, first_name: "Bob" }

describe("a heartbeat turn under approvalMode ask", () => {
  // A heartbeat serves no person, so every message it sends is to someone other than the one served: a privileged
  // call. Nobody is there to approve it (the operator may be asleep; a heartbeat holding the queue for approvalTimeout
  // would hold every person's turn too), so it is refused at once with a tool error saying why, and nothing goes out.
  it.scopedLive("cannot message anyone, the operator included: refused at once, nothing reaches Telegram, nothing left pending", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model, { approvalMode: "ask" }), telegram)
      yield* pair(agent, alice, true)
      yield* pair(agent, bob)
      yield* model.reply(
        FakeReply.toolCalls([
          { id: "to-bob", name: "message", args: { interface: "telegram", userId: "43", text: "the operator's private note" } },
          { id: "to-alice", name: "message", args: { interface: "telegram", userId: "42", text: "all well" } }
        ]),
        FakeReply.text("NO_REPLY")
      )
      // The turn the heartbeat queues (AgentRuntime's tick), with the runtime's own interface and person.
      yield* agent.runtime.submit({
        interface: heartbeatInterface,
        channel: "heartbeat",
        userId: "system",
        text: heartbeatPrompt("2026-01-02", { stale: [], unindexed: [] })
      })
      const [, second] = yield* model.awaitRequests(2)
      const results = toolResultsById(second!.body)
      for (const id of ["to-bob", "to-alice"]) {
        expect(results[id], id).toContain("PERMISSION_DENIED")
        expect(results[id], id).toContain("a heartbeat turn has nobody to ask")
        expect(results[id], id).toContain("not to the person this turn serves")
      }
      expect(yield* agent.approvals.pending).toEqual([])
      expect(yield* telegram.calls("sendMessage")).toEqual([])
      expect(yield* telegram.chat(42)).toEqual([])
      expect(yield* telegram.chat(43)).toEqual([])
      yield* agent.stop
    }))
})
