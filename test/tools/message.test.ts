import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ChannelError, type ChannelState, ChannelStatus, type OutgoingFile } from "../../src/tools/Channels.js"
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
    const files = yield* Ref.make<ReadonlyArray<{ readonly chatId: string; readonly file: OutgoingFile; readonly caption: string }>>([])
    const channel = {
      interface: iface,
      status: Effect.succeed(new ChannelStatus({ interface: iface, state, detail: state === "connected" ? "" : "bad token", sinceMs: 0 })),
      send: (chatId: string, text: string) =>
        state === "connected"
          ? Ref.update(sent, (all) => [...all, { chatId, text }])
          : Effect.fail(new ChannelError({ interface: iface, reason: "not_connected", message: `${iface} is not connected` })),
      sendFile: (chatId: string, file: OutgoingFile, caption: string) =>
        state === "connected"
          ? Ref.update(files, (all) => [...all, { chatId, file, caption }])
          : Effect.fail(new ChannelError({ interface: iface, reason: "not_connected", message: `${iface} is not connected` }))
    }
    return { channel, sent, files }
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

  it.live("sends a workspace file or a media id with a caption; .kern/ and unknown ids are refused; without a target it sends into this chat", () =>
    Effect.scoped(Effect.gen(function*() {
      const { runtime, model, dir, channels, client } = yield* startServer({ config: { recall: false } })
      const telegram = yield* recordingChannel("telegram", "connected")
      yield* channels.register(telegram.channel)
      yield* Effect.gen(function*() {
        const store = yield* PairingStore
        const alice = yield* store.request({ interface: "telegram", userId: "42", chatId: "9042", displayName: "Alice" })
        yield* store.approve(alice.code, "operator")
      }).pipe(Effect.provide(pairings(dir)))
      NodeFs.mkdirSync(NodePath.join(dir, "reports"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(dir, "reports", "week.csv"), "day,count\nmon,3\n")
      const events = yield* client.events()
      yield* model.reply(
        FakeReply.toolCalls([
          { id: "f1", name: "message", args: { userId: "42", interface: "telegram", text: "the week", file: "reports/week.csv" } },
          { id: "f2", name: "message", args: { userId: "42", interface: "telegram", text: "", file: ".kern/.env" } },
          { id: "f3", name: "message", args: { userId: "42", interface: "telegram", text: "x", file: "med_000000000000000000000000" } },
          { id: "f4", name: "message", args: { userId: "42", interface: "telegram", text: "" } },
          { id: "f5", name: "message", args: { text: "here it is", file: "reports/week.csv" } },
          { id: "f6", name: "message", args: { userId: "42", text: "half a target", file: "reports/week.csv" } }
        ]),
        FakeReply.text("sent")
      )
      yield* runtime.submit({ interface: "web", channel: "web", userId: "operator", text: "send alice the week" })
      const [, second] = yield* model.awaitRequests(2)
      const results = toolResultsById(second!.body)
      expect(results.f1).toContain("\"sent\": true")
      expect(results.f1).toContain("\"name\": \"week.csv\"")
      expect(results.f2).toContain("PERMISSION_DENIED")
      expect(results.f3).toContain("NOT_FOUND")
      expect(results.f4).toContain("nothing to send")
      expect(results.f5).toContain("\"to\": \"this chat\"")
      expect(results.f6).toContain("give both userId and interface")
      const sentFiles = yield* Ref.get(telegram.files)
      expect(sentFiles.map((sent) => ({ chatId: sent.chatId, name: sent.file.name, caption: sent.caption, text: new TextDecoder().decode(sent.file.bytes) })))
        .toEqual([{ chatId: "9042", name: "week.csv", caption: "the week", text: "day,count\nmon,3\n" }])
      // The web chat is no chat channel: its file is the outgoing event, with the file's reference.
      const outgoing = yield* events.pipe(
        Stream.filter((event: AgentEvent) => event.type === "outgoing"),
        Stream.take(2),
        Stream.runCollect
      )
      expect(JSON.stringify([...outgoing])).toContain("week.csv")
    })))
})
