import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import * as FakeSlack from "../../support/fakeSlack.js"
import { chunkLimit, splitMessage } from "../../../src/channels/slack/split.js"
import { advanceUntil, agentFolder, pairUser, startSlackAgent, textOf } from "./harness.js"

/**
 * The model answers a second after it is asked (on the TestClock), so a turn's placeholder is always posted before
 * its reply exists; tests then move the clock until what they wait for arrives.
 */
const answerLater = { delay: "1 second" } as const

describe("Slack replies", () => {
  it.scoped("a paired user's DM becomes a turn; the placeholder is replaced by the reply, in mrkdwn with &, <, > escaped", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* model.reply(FakeReply.text("Sure: **bold** & `a<b>` <script> [docs](https://example.com/x)", answerLater))
      yield* slack.awaitConnections(1)

      const dm = yield* slack.dm("U1", "compare a &lt; b &amp; c")
      yield* slack.awaitAck(dm.envelopeId)
      const [request] = yield* model.awaitRequests(1)
      // The model reads the user's text unescaped, from a Slack turn of that DM.
      expect(JSON.stringify(request!.body)).toContain("compare a < b & c")
      expect(JSON.stringify(request!.body)).toContain("via slack, DU1, user: U1")

      const [placeholder] = yield* slack.awaitCalls("chat.postMessage", 1)
      expect(placeholder!.body).toMatchObject({ channel: "DU1" })
      expect(placeholder!.body["thread_ts"]).toBeUndefined()
      expect(placeholder!.token).toBe(slack.botToken)
      const expected = "Sure: *bold* &amp; `a&lt;b&gt;` &lt;script&gt; <https://example.com/x|docs>"
      const update = yield* advanceUntil(slack.awaitCall("chat.update", (call) => textOf(call) === expected))
      expect(update!.atMs - placeholder!.atMs).toBeGreaterThanOrEqual(1000)
      const posted = yield* slack.callsOf("chat.postMessage")
      expect(posted).toHaveLength(1)
    }))

  it.scoped("a mention in a channel is answered in its thread, the mention itself stripped from the text", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U2")
      yield* model.reply(FakeReply.text("In the thread.", answerLater))
      yield* slack.awaitConnections(1)

      const mention = yield* slack.mention("U2", "C9", "what's up?")
      yield* slack.awaitAck(mention.envelopeId)
      const [request] = yield* model.awaitRequests(1)
      const body = JSON.stringify(request!.body)
      expect(body).toContain("what's up?")
      expect(body).not.toContain("<@UBOT>")
      const [placeholder] = yield* slack.awaitCalls("chat.postMessage", 1)
      const rootTs = (mention.payload as { readonly event: { readonly ts: string } }).event.ts
      expect(placeholder!.body).toMatchObject({ channel: "C9", thread_ts: rootTs })
      // The turn's channel names the thread: `C9:<root ts>`.
      expect(body).toContain(`via slack, C9:${rootTs}, user: U2`)
      const update = yield* advanceUntil(slack.awaitCall("chat.update", (call) => textOf(call) === "In the thread."))
      expect(update!.body["channel"]).toBe("C9")
      // The message updated is the placeholder posted in the thread.
      expect((yield* slack.message(String(update!.body["ts"])))?.threadTs).toBe(rootTs)
    }))

  it.scoped("while a turn runs, chat.update is spaced at least a second apart on the Clock and shows the tool at work", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* model.reply(
        FakeReply.toolCalls([{ id: "call_1", name: "read", args: { path: "AGENTS.md" } }], { text: "Let me look.", ...answerLater }),
        FakeReply.text("Done reading.", { delay: "5 seconds" })
      )
      yield* slack.awaitConnections(1)
      yield* slack.dm("U1", "read your instructions")
      const [placeholder] = yield* slack.awaitCalls("chat.postMessage", 1)
      expect(textOf(placeholder!)).toBe("_thinking…_")

      const live = yield* advanceUntil(slack.awaitCall("chat.update", (call) => textOf(call).includes("_running read…_")))
      // The tool's line replaces the text before the call.
      expect(textOf(live)).not.toContain("Let me look.")
      yield* advanceUntil(slack.awaitCall("chat.update", (call) => textOf(call) === "Done reading."))
      const updates = yield* slack.callsOf("chat.update")
      expect(textOf(updates[updates.length - 1]!)).toBe("Done reading.")
      const times = [placeholder!.atMs, ...updates.map((update) => update.atMs)]
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1000)
      expect(yield* slack.callsOf("chat.postMessage")).toHaveLength(1)
    }))

  it.scoped("a long reply replaces the placeholder with its first chunk and follows in the same thread; a NO_REPLY turn leaves nothing", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      const long = Array.from({ length: 300 }, (_, i) => `Paragraph ${i}: some words to make it long.`).join("\n\n")
      yield* model.reply(FakeReply.text(long, answerLater), FakeReply.text("Nothing to add. NO_REPLY", answerLater))
      yield* slack.awaitConnections(1)

      const mention = yield* slack.mention("U1", "C7", "write a lot")
      const rootTs = (mention.payload as { readonly event: { readonly ts: string } }).event.ts
      yield* slack.awaitCalls("chat.postMessage", 1)
      const firstChunk = splitMessage(long)[0]
      const update = yield* advanceUntil(slack.awaitCall("chat.update", (call) => textOf(call) === firstChunk))
      const posts = yield* slack.awaitCalls("chat.postMessage", 4)
      const chunks = [textOf(update), ...posts.slice(1).map(textOf)]
      expect(chunks.every((chunk) => chunk.length <= chunkLimit)).toBe(true)
      expect(posts.every((post) => post.body["thread_ts"] === rootTs && post.body["channel"] === "C7")).toBe(true)
      expect(chunks.join("\n\n")).toBe(long)

      yield* slack.dm("U1", "anything?")
      const placeholder = (yield* slack.awaitCalls("chat.postMessage", 5))[4]
      const deleted = yield* advanceUntil(slack.awaitCall("chat.delete", () => true))
      expect(deleted.body["channel"]).toBe("DU1")
      expect(placeholder!.body["channel"]).toBe("DU1")
      // What streamed before the marker was seen goes with the placeholder: nothing is left in the DM.
      expect((yield* slack.posted).filter((message) => message.channel === "DU1")).toEqual([])
    }))
})
