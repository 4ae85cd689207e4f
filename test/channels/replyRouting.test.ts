import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import * as ReplyPlaceholders from "../../src/channels/ReplyPlaceholders.js"
import * as SlackApi from "../../src/channels/slack/SlackApi.js"
import * as SlackReplies from "../../src/channels/slack/Replies.js"
import * as TelegramApi from "../../src/channels/telegram/api.js"
import { makeReplies } from "../../src/channels/telegram/replies.js"
import * as Database from "../../src/storage/Database.js"
import type { QueuedMessage } from "../../src/turn/MessageQueue.js"
import { incomingOf, noUsage, type TurnEvent, turnIdsOf } from "../../src/turn/TurnEvent.js"
import * as FakeSlack from "../support/fakeSlack.js"
import { queued } from "../support/chatTurns.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"

const placeholders = ReplyPlaceholders.layerSql.pipe(Layer.provide(Database.layerMemory))


/**
 * Two chats' turns interleaved event by event, as the runtime publishes them when one turn's events arrive while
 * another's are still coming (the channel's own consumer sees one stream): each turn names its chat only in its
 * `incoming`. A third turn from another interface with the same channel name, and a turn whose start was not seen,
 * must reach no chat. The reply texts name their chat, so a misrouted one shows.
 */
const interleaved = (a: QueuedMessage, b: QueuedMessage, web: QueuedMessage, unseen: QueuedMessage): ReadonlyArray<TurnEvent> => {
  const [ia, ib, iw, iu] = [turnIdsOf(a), turnIdsOf(b), turnIdsOf(web), turnIdsOf(unseen)]
  const finish = (ids: typeof ia, reply: string): TurnEvent => ({ type: "finish", ...ids, reply, steps: 1, usage: noUsage, delivered: true })
  return [
    { ...incomingOf(a), ...ia },
    { type: "thinking", ...ia, step: 1 },
    { ...incomingOf(b), ...ib },
    { ...incomingOf(web), ...iw },
    { type: "text-delta", ...ib, delta: `reply for ${b.channel}` },
    { type: "text-delta", ...ia, delta: `reply for ${a.channel}` },
    { type: "text-delta", ...iu, delta: "reply for nobody" },
    { type: "text-delta", ...iw, delta: "reply for the web" },
    finish(ib, `reply for ${b.channel}`),
    finish(iu, "reply for nobody"),
    finish(iw, "reply for the web"),
    finish(ia, `reply for ${a.channel}`)
  ]
}

describe("chat replies route by the turn's incoming event", () => {
  it.live("Telegram: two chats' interleaved turns each reply in their own chat", () =>
    Effect.scoped(Effect.gen(function*() {
      const telegram = yield* makeFakeTelegram()
      const http = yield* Layer.build(NodeHttpClient.layerUndici)
      const api = yield* TelegramApi.make({ root: telegram.root, token: telegram.token }).pipe(Effect.provide(http))
      const handle = yield* makeReplies(api).pipe(Effect.provide(placeholders))
      const events = interleaved(
        queued("telegram", "101", "101", "1"),
        queued("telegram", "202", "202", "2"),
        queued("web", "101", "operator", "3"),
        queued("telegram", "303", "303", "4")
      )
      for (const event of events) yield* handle(event)
      const done = (text: string) => (messages: ReadonlyArray<{ readonly text: string }>) => messages.some((m) => m.text === text)
      const first = yield* telegram.awaitChat(101, done("reply for 101")).pipe(Effect.timeout(Duration.seconds(30)))
      const second = yield* telegram.awaitChat(202, done("reply for 202")).pipe(Effect.timeout(Duration.seconds(30)))
      expect(first.map((m) => m.text)).toEqual(["reply for 101"])
      expect(second.map((m) => m.text)).toEqual(["reply for 202"])
      const sent = (yield* telegram.calls()).map((call) => JSON.stringify(call.body)).join("\n")
      expect(sent).not.toMatch(/reply for (the web|nobody)|"303"/)
    })))

  it.live("Slack: two DMs' interleaved turns each reply in their own DM", () =>
    Effect.scoped(Effect.gen(function*() {
      const slack = yield* FakeSlack.make()
      const http = yield* Layer.build(NodeHttpClient.layerUndici)
      const api = yield* SlackApi.make({ apiUrl: slack.apiUrl, botToken: slack.botToken, appToken: slack.appToken }).pipe(Effect.provide(http))
      const handle = yield* SlackReplies.make(api).pipe(Effect.provide(placeholders))
      const events = interleaved(
        queued("slack", "DA", "UA", "1"),
        queued("slack", "DB", "UB", "2"),
        queued("web", "DA", "operator", "3"),
        queued("slack", "DC", "UC", "4")
      )
      for (const event of events) yield* handle(event)
      const replyIn = (channel: string) =>
        slack.awaitAnyCall((call) => String(call.body["channel"]) === channel && String(call.body["text"]).startsWith("reply for")).pipe(
          Effect.timeout(Duration.seconds(30))
        )
      expect(String((yield* replyIn("DA")).body["text"])).toBe("reply for DA")
      expect(String((yield* replyIn("DB")).body["text"])).toBe("reply for DB")
      const sent = (yield* slack.calls).map((call) => JSON.stringify(call.body)).join("\n")
      expect(sent).not.toMatch(/reply for (the web|nobody)|"DC"/)
      for (const call of yield* slack.calls) {
        const text = String(call.body["text"])
        if (text.startsWith("reply for")) expect(text).toBe(`reply for ${String(call.body["channel"])}`)
      }
    })))
})
