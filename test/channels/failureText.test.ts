import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Schedule } from "effect"
import type { QueuedMessage } from "../../src/turn/MessageQueue.js"
import { incomingOf, noUsage, type TurnEvent, turnIdsOf } from "../../src/turn/TurnEvent.js"
import { apology, failureTextFor } from "../../src/channels/failureText.js"
import * as ReplyPlaceholders from "../../src/channels/ReplyPlaceholders.js"
import * as SlackApi from "../../src/channels/slack/SlackApi.js"
import * as SlackReplies from "../../src/channels/slack/Replies.js"
import * as TelegramApi from "../../src/channels/telegram/api.js"
import { makeReplies } from "../../src/channels/telegram/replies.js"
import * as FakeSlack from "../support/fakeSlack.js"
import * as Database from "../../src/storage/Database.js"
import { queued } from "../support/chatTurns.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"

const placeholders = ReplyPlaceholders.layerSql.pipe(Layer.provide(Database.layerMemory))

/** Failures as the runtime reports them: each names configuration a chat user must not see. */
const failures: ReadonlyArray<string> = [
  "the provider refused the key (401): check FAKE_KEY in .kern/.env",
  "no API key for provider \"openrouter\": set OPENROUTER_API_KEY in .kern/.env or the environment",
  "stopped after 30 steps (maxSteps)",
  "the turn's budget is used up (maxCostUsdCents 500 reached: 3 tool calls, 10 prompt tokens, 1.00¢)",
  "model \"gpt-x\" not found at http://127.0.0.1:11434/v1 (baseURL in /home/op/agent/.kern/config.json)"
]

/** What a failure text must not name. */
const configWords = /FAKE_KEY|OPENROUTER_API_KEY|\.kern|\.env|config\.json|maxSteps|maxCostUsdCents|baseURL|127\.0\.0\.1|\/home\//

const errorEvents = (detail: string, message: QueuedMessage): ReadonlyArray<TurnEvent> => {
  const ids = turnIdsOf(message)
  return [
    incomingEvent(message),
    { type: "thinking", ...ids, step: 1 },
    { type: "error", ...ids, message: detail, failure: { _tag: "ProviderFailed", reason: "auth", message: detail } },
    { type: "finish", ...ids, reply: "", steps: 1, usage: noUsage, delivered: false }
  ]
}

const incomingEvent = (message: QueuedMessage): TurnEvent => ({ ...incomingOf(message), ...turnIdsOf(message) })


describe("a failed turn, told to a chat user", () => {
  it("the operator gets the detail; anyone else a short apology naming no configuration", () => {
    for (const detail of failures) {
      expect(failureTextFor({ userId: "operator" }, detail)).toBe(detail)
      for (const userId of ["42", "U1", ""]) {
        const text = failureTextFor({ userId }, detail)
        expect(text).toBe(apology)
        expect(text).not.toMatch(configWords)
      }
    }
  })

  it("a message refused for a full disk says so to anyone (send it again later), still naming no path", () => {
    const detail = "could not append to /home/op/agent/.kern/sessions/x.jsonl: disk full (no space left on the device); the message was not recorded: free some space and send it again"
    const failure = { _tag: "SessionNotWritten", reason: "disk-full", message: detail } as const
    expect(failureTextFor({ userId: "operator" }, detail, failure)).toBe(detail)
    for (const userId of ["42", "U1"]) {
      const text = failureTextFor({ userId }, detail, failure)
      expect(text).toMatch(/disk is full/)
      expect(text).toMatch(/send it again/)
      expect(text).not.toMatch(configWords)
    }
    expect(failureTextFor({ userId: "42" }, detail, { ...failure, reason: "io" })).toBe(apology)
  })

  it.live("Telegram: a paired user's chat shows the apology, never the failure's detail", () =>
    Effect.scoped(Effect.gen(function*() {
      const telegram = yield* makeFakeTelegram()
      const http = yield* Layer.build(NodeHttpClient.layerUndici)
      const api = yield* TelegramApi.make({ root: telegram.root, token: telegram.token }).pipe(Effect.provide(http))
      const handle = yield* makeReplies(api).pipe(Effect.provide(placeholders))
      for (const [i, detail] of failures.entries()) {
        const chatId = 100 + i
        const message = queued("telegram", String(chatId), String(chatId), String(i + 1))
        for (const event of errorEvents(detail, message)) yield* handle(event)
        const shownText = Effect.map(telegram.chat(chatId), (messages) => messages.map((m) => m.text).join("\n"))
        yield* Effect.repeat(shownText, { until: (text) => text.includes("⚠"), schedule: Schedule.spaced("50 millis") }).pipe(
          Effect.timeout(Duration.seconds(30))
        )
        expect(yield* shownText).not.toMatch(configWords)
        expect(yield* shownText).toContain(apology)
      }
      const sent = (yield* telegram.calls()).map((call) => JSON.stringify(call.body)).join("\n")
      expect(sent).not.toMatch(configWords)
    })))

  it.live("Slack: a paired user's DM shows the apology, never the failure's detail", () =>
    Effect.scoped(Effect.gen(function*() {
      const slack = yield* FakeSlack.make()
      const http = yield* Layer.build(NodeHttpClient.layerUndici)
      const api = yield* SlackApi.make({ apiUrl: slack.apiUrl, botToken: slack.botToken, appToken: slack.appToken }).pipe(Effect.provide(http))
      const handle = yield* SlackReplies.make(api).pipe(Effect.provide(placeholders))
      for (const [i, detail] of failures.entries()) {
        const message = queued("slack", `DU${i}`, `U${i}`, String(i + 1))
        for (const event of errorEvents(detail, message)) yield* handle(event)
        const shown = yield* slack.awaitAnyCall((call) => String(call.body["channel"]) === `DU${i}` && String(call.body["text"]).includes(":warning:")).pipe(
          Effect.timeout(Duration.seconds(30))
        )
        expect(String(shown.body["text"])).not.toMatch(configWords)
        expect(String(shown.body["text"])).toContain(apology)
      }
      const sent = (yield* slack.calls).map((call) => JSON.stringify(call.body)).join("\n")
      expect(sent).not.toMatch(configWords)
    })))
})
