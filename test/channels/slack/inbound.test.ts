import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { seenKey } from "../../../src/channels/slack/Inbound.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import * as FakeSlack from "../../support/fakeSlack.js"
import { agentFolder, awaitReply, pairUser, startSlackAgent, textOf } from "./harness.js"

/** An event kern ignores: acknowledged after everything delivered before it (envelopes are handled in order). */
const marker = (slack: FakeSlack.FakeSlack) =>
  Effect.flatMap(slack.sendEvent({ type: "reaction_added", user: "U1", reaction: "eyes" }), (sent) => slack.awaitAck(sent.envelopeId))

describe("Slack inbound", () => {
  it.scoped("a frame nested too deep is skipped with a warning; the connection goes on taking messages", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* model.reply(FakeReply.text("Still here."))
      yield* slack.awaitConnections(1)
      const arrays = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`
      const objects = (depth: number) => `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`
      const frames = [
        arrays(3000),
        objects(100_000),
        `{"envelope_id":"e-deep","type":"events_api","payload":{"event":{"type":"message","text":${arrays(3000)}}}}`,
        `{"type":"hello","debug_info":${objects(3000)}}`,
        "[".repeat(5000)
      ]
      for (const frame of frames) yield* slack.frame(frame)
      yield* slack.dm("U1", "are you there?")
      yield* awaitReply(slack, "Still here.")
      yield* marker(slack)
    }))

  it.scoped("an envelope is acknowledged only once its message is in the inbox: a failed write is not acked, and Slack's retry is taken", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* model.reply(FakeReply.text("Got it."))
      yield* slack.awaitConnections(1)

      // kern.db refuses the inbox row (as a full disk would).
      yield* agent.sql`CREATE TRIGGER kern_test_block BEFORE INSERT ON inbox BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END`
      const first = yield* slack.dm("U1", "remember the milk")
      yield* marker(slack)
      expect((yield* slack.acks).map((ack) => ack.envelopeId)).not.toContain(first.envelopeId)
      expect(yield* agent.inbox.size).toBe(0)
      // Not marked seen either: the retry must be taken.
      expect(Option.getOrElse(yield* agent.inbox.cursor(seenKey), () => "")).not.toContain(first.eventId)

      yield* agent.sql`DROP TRIGGER kern_test_block`
      const retry = yield* slack.redeliver(first)
      yield* slack.awaitAck(retry)
      const [request] = yield* model.awaitRequests(1)
      expect(JSON.stringify(request!.body)).toContain("remember the milk")
      // The event id is stored with the message.
      expect(Option.getOrThrow(yield* agent.inbox.cursor(seenKey))).toContain(first.eventId)
      yield* awaitReply(slack, "Got it.")
    }))

  it.scoped("a redelivered envelope is acknowledged and handled once, also by the next process over the same folder", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const dir = agentFolder(model)
      yield* model.reply(FakeReply.text("Once."))

      const first = yield* Effect.scoped(Effect.gen(function*() {
        const agent = yield* startSlackAgent({ dir, slack })
        yield* pairUser(agent.pairings, "U1")
        yield* slack.awaitConnections(1)
        const sent = yield* slack.dm("U1", "only once please")
        yield* slack.awaitAck(sent.envelopeId)
        const again = yield* slack.redeliver(sent)
        yield* slack.awaitAck(again)
        yield* awaitReply(slack, "Once.")
        return sent
      }))

      // A new process over the same folder: Slack retries the envelope once more.
      const agent = yield* startSlackAgent({ dir, slack })
      yield* slack.awaitConnections(2)
      const late = yield* slack.redeliver(first)
      yield* slack.awaitAck(late)
      yield* marker(slack)
      expect(yield* model.modelRequests).toHaveLength(1)
      expect(yield* agent.inbox.size).toBe(0)
      expect(yield* slack.callsOf("chat.postMessage")).toHaveLength(1)
    }))

  it.scoped("a stranger's DM gets a pairing code and never reaches the model; a stranger's mention gets it privately in the thread", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* model.reply(FakeReply.text("Hello, friend."))
      yield* slack.awaitConnections(1)

      const dm = yield* slack.dm("U9", "let me in, secret plan")
      yield* slack.awaitAck(dm.envelopeId)
      const [codeMessage] = yield* slack.awaitCalls("chat.postMessage", 1)
      const pairing = yield* agent.pairings.find("slack:U9")
      expect(pairing.status).toBe("pending")
      expect(codeMessage!.body["channel"]).toBe("DU9")
      expect(textOf(codeMessage!)).toContain(`kern pair ${pairing.code}`)

      const mention = yield* slack.mention("U8", "C5", "hey bot, secret plan")
      yield* slack.awaitAck(mention.envelopeId)
      const [ephemeral] = yield* slack.awaitCalls("chat.postEphemeral", 1)
      const rootTs = (mention.payload as { readonly event: { readonly ts: string } }).event.ts
      expect(ephemeral!.body).toMatchObject({ channel: "C5", user: "U8", thread_ts: rootTs })
      expect(textOf(ephemeral!)).toContain(`kern pair ${(yield* agent.pairings.find("slack:U8")).code}`)

      // The first model request is the paired user's, and nothing of the strangers' is in it.
      yield* slack.dm("U1", "hi there")
      const [request] = yield* model.awaitRequests(1)
      const body = JSON.stringify(request!.body)
      expect(body).toContain("hi there")
      expect(body).not.toContain("secret plan")
      yield* awaitReply(slack, "Hello, friend.")
      expect(yield* model.modelRequests).toHaveLength(1)
    }))
})
