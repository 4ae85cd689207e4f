import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref, Stream } from "effect"
import * as NodePath from "node:path"
import { ChannelError, type ChannelState, ChannelStatus } from "../../src/tools/Channels.js"
import type { AgentEvent } from "../../src/channels/web/api.js"
import * as Database from "../../src/storage/Database.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { startServer } from "../channels/web/harness.js"
import { FakeReply } from "../support/fakeModelServer.js"
import { toolResultsById } from "../support/modelRequests.js"

const pairings = (dir: string) =>
  PairingStore.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })), Layer.orDie)

/**
 * A channel of kern's own interface that records what it is asked to send (the Telegram and Slack channels have
 * their own tests against fake peers): this test is about the tool's rules, not a peer's wire.
 */
const recordingChannel = (iface: string, state: ChannelState) =>
  Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<{ readonly chatId: string; readonly text: string }>>([])
    const channel = {
      interface: iface,
      status: Effect.succeed(new ChannelStatus({ interface: iface, state, detail: state === "connected" ? "" : "bad token", sinceMs: 0 })),
      send: (chatId: string, text: string) =>
        state === "connected"
          ? Ref.update(sent, (all) => [...all, { chatId, text }])
          : Effect.fail(new ChannelError({ interface: iface, reason: "not_connected", message: `${iface} is not connected` }))
    }
    return { channel, sent }
  })

describe("the message tool", () => {
  it.live("sends to a paired user's chat over their channel, shows it as outgoing, and refuses the rest with reasons", () =>
    Effect.scoped(Effect.gen(function*() {
      const { runtime, model, dir, channels, client } = yield* startServer({ config: { recall: false } })
      const telegram = yield* recordingChannel("telegram", "connected")
      const slack = yield* recordingChannel("slack", "reconnecting")
      yield* channels.register(telegram.channel)
      yield* channels.register(slack.channel)
      yield* Effect.gen(function*() {
        const store = yield* PairingStore
        const alice = yield* store.request({ interface: "telegram", userId: "42", chatId: "9042", displayName: "Alice" })
        yield* store.approve(alice.code, "operator")
        yield* store.request({ interface: "telegram", userId: "77", chatId: "9077" })
        const bob = yield* store.request({ interface: "slack", userId: "U1", chatId: "D1" })
        yield* store.approve(bob.code, "operator")
      }).pipe(Effect.provide(pairings(dir)))
      const events = yield* client.events()
      yield* model.reply(
        FakeReply.toolCalls([
          { id: "m1", name: "message", args: { userId: "42", interface: "telegram", text: "The build is green." } },
          { id: "m2", name: "message", args: { userId: "5", interface: "telegram", text: "hello stranger" } },
          { id: "m3", name: "message", args: { userId: "77", interface: "telegram", text: "not yet paired" } },
          { id: "m4", name: "message", args: { userId: "U1", interface: "slack", text: "slack is down" } },
          { id: "m5", name: "message", args: { userId: "42", interface: "irc", text: "no such channel" } },
          { id: "m6", name: "message", args: { userId: "42", interface: "telegram", text: "" } }
        ]),
        FakeReply.text("sent")
      )
      yield* runtime.submit({ interface: "web", channel: "web", userId: "operator", text: "tell alice" })
      const [, second] = yield* model.awaitRequests(2)
      const results = toolResultsById(second!.body)
      expect(results.m1).toContain("\"sent\": true")
      expect(results.m2).toContain("NOT_FOUND")
      expect(results.m2).toContain("telegram:5")
      expect(results.m3).toContain("PERMISSION_DENIED")
      expect(results.m3).toContain("has not been paired")
      expect(results.m4).toContain("PERMISSION_DENIED")
      expect(results.m4).toContain("slack channel is not connected (reconnecting: bad token)")
      expect(results.m5).toContain("VALIDATION_ERROR")
      expect(results.m5).toContain("unknown interface \"irc\": message reaches paired users over telegram or slack")
      expect(results.m6).toContain("VALIDATION_ERROR")
      expect(yield* Ref.get(telegram.sent)).toEqual([{ chatId: "9042", text: "The build is green." }])
      expect(yield* Ref.get(slack.sent)).toEqual([])
      const outgoing = yield* events.pipe(
        Stream.filter((event: AgentEvent) => event.type === "outgoing" && event.turnId === undefined),
        Stream.take(1),
        Stream.runCollect
      )
      expect([...outgoing][0]).toMatchObject({ type: "outgoing", interface: "telegram", channel: "9042", text: "The build is green." })
    })))
})
