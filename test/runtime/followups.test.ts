import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Scope } from "effect"
import { Followups } from "../../src/tools/Followups.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { buildAgentCore, testAgentDir } from "../support/testAgentDir.js"

// Work that outlives its turn reports back as a new turn in the conversation that started it, exactly once per key,
// across restarts.

const agentDir = () => testAgentDir()

const started = buildAgentCore

describe("followups", () => {
  it.scopedLive("post a message once per key into the origin's conversation, and keep it through a restart", () =>
    Effect.gen(function*() {
      const dir = agentDir()
      const friend = { interface: "telegram", channel: "42", userId: "42" }

      const first = yield* Scope.make()
      const context = yield* started(dir, first)
      const followups = Context.get(context, Followups)
      expect(yield* followups.posted("job:1:finished")).toBe(false)
      expect(yield* followups.post("job:1:finished", friend, "[job 1 finished: exit 0 after 2s]")).toBe(true)
      expect(yield* followups.post("job:1:finished", friend, "[job 1 finished: exit 0 after 2s]")).toBe(false)
      expect(yield* followups.posted("job:1:finished")).toBe(true)
      const queue = Context.get(context, MessageQueue)
      expect(yield* queue.size).toBe(1)
      const taken = yield* queue.next
      // Not the operator's: the friend's own direct chat, with the friend as the sender.
      expect(taken).toMatchObject({ ...friend, text: "[job 1 finished: exit 0 after 2s]", conversation: "telegram-42" })
      // The process ends before the turn recorded the message: the next start answers it, and the key stays posted.
      yield* Scope.close(first, Exit.void)

      const second = yield* Scope.make()
      const again = yield* started(dir, second)
      const replayed = yield* Context.get(again, MessageQueue).next
      expect(replayed).toMatchObject({ text: "[job 1 finished: exit 0 after 2s]", conversation: "telegram-42", inboxId: taken.inboxId })
      expect(yield* Context.get(again, Followups).post("job:1:finished", friend, "again")).toBe(false)
      yield* Scope.close(second, Exit.void)
    }), 60_000)
})
