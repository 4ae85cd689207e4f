import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import * as NodePath from "node:path"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { testRuntime } from "../support/operatorTurn.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const marker = "bank PIN is 4711"

/** One turn of telegram user 555 in their own conversation; the tool results it produced. */
const friendTurn = (text: string) =>
  Effect.scoped(Effect.gen(function*() {
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const { session } = yield* openActiveSession()
    yield* queue.offer({ interface: "telegram", channel: "555", userId: "555", conversation: "telegram-555", text })
    const message = yield* queue.next
    const events = yield* Ref.make<ReadonlyArray<TurnEvent>>([])
    yield* runner.run({ message, session, emit: (event) => Ref.update(events, (all) => [...all, event]) })
    yield* queue.endTurn("telegram-555")
    return (yield* Ref.get(events)).filter((event) => event.type === "tool-result").map((event) => JSON.stringify(event))
  }))

describe("a paired user's memory reach goes from their pairing into their turn (TurnRunner's audience)", () => {
  it.live("shared by default: reading the operator's KNOWLEDGE.md is refused naming shared/; after setMemory all it is read", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, {
        ".kern/config.json": JSON.stringify({ provider: "openai", model: "test-model", baseURL: server.baseURL, recall: false }),
        "KNOWLEDGE.md": `# Knowledge\n\n${marker}\n`
      })
      yield* Effect.gen(function*() {
        const pairings = yield* PairingStore
        const pending = yield* pairings.request({ interface: "telegram", userId: "555", chatId: "555", displayName: "Friend" })
        yield* pairings.approve(pending.code, "operator")
        const readKnowledge = FakeReply.toolCalls([{ id: "call_1", name: "read", args: { path: NodePath.join(dir, "KNOWLEDGE.md") } }])

        yield* server.reply(readKnowledge, FakeReply.text("ok"))
        const [refused = ""] = yield* friendTurn("what do you know?")
        expect(refused).toContain("outside shared/")
        expect(refused).not.toContain(marker)

        yield* pairings.setMemory("telegram:555", "all")
        yield* server.reply(readKnowledge, FakeReply.text("ok"))
        const [read = ""] = yield* friendTurn("and now?")
        expect(read).toContain(marker)
      }).pipe(Effect.provide(testRuntime(dir)))
    })))
})
