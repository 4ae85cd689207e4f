import { describe, expect, it } from "@effect/vitest"
import { Chunk, Clock, Effect, Option, TestClock } from "effect"
import type { ChannelStatus } from "../../../src/tools/Channels.js"
import { make as makeFakeModel } from "../../support/fakeModelServer.js"
import { Failures, make as makeFakeTelegram } from "../../support/fakeTelegram.js"
import { agentFolder, type RunningAgent, startAgent } from "./harness.js"

/** How often a wait for a condition looks again. */
const poll = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 50)))

/**
 * Real time for a call that is wrongly due to reach the fake server before the test says none came. Absence has no
 * event to wait for, so this is a window, of 2 s so that a busy machine cannot hide such a call.
 */
const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 2_000)))

/** Waits until a fiber sleeps until exactly `dueMs` on the TestClock. */
const sleepingUntil = (dueMs: number) =>
  Effect.gen(function*() {
    while (!Chunk.some(yield* TestClock.sleeps(), (at) => at === dueMs)) yield* poll
  })

const telegramStatus = (agent: RunningAgent) =>
  Effect.map(agent.channels.statuses, (all) => all.find((s) => s.interface === "telegram") as ChannelStatus)

describe("Telegram channel failures", () => {
  it.scoped("409, 429 (after retry_after) and 5xx are retried with backoff, then the channel is connected again", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      yield* telegram.fail("getUpdates", Failures.conflict)
      yield* telegram.fail("getUpdates", Failures.rateLimited(7))
      yield* telegram.fail("getUpdates", Failures.server)
      const agent = yield* startAgent(agentFolder(model), telegram)

      yield* telegram.awaitCalls("getUpdates", 1)
      const t0 = yield* Clock.currentTimeMillis
      // After the 409: the first backoff, one second.
      yield* sleepingUntil(t0 + 1000)
      expect(yield* telegramStatus(agent)).toMatchObject({ state: "reconnecting", detail: expect.stringContaining("Conflict") })
      yield* TestClock.adjust(999)
      yield* settle
      expect((yield* telegram.calls("getUpdates")).length).toBe(1)
      yield* TestClock.adjust(1)
      yield* telegram.awaitCalls("getUpdates", 2)

      // After the 429: exactly the seconds Telegram asked for.
      yield* sleepingUntil(t0 + 1000 + 7000)
      expect((yield* telegramStatus(agent)).detail).toContain("Too Many Requests")
      yield* TestClock.adjust(6999)
      yield* settle
      expect((yield* telegram.calls("getUpdates")).length).toBe(2)
      yield* TestClock.adjust(1)
      yield* telegram.awaitCalls("getUpdates", 3)

      // After the 502, the third failure in a row: four seconds.
      yield* sleepingUntil(t0 + 8000 + 4000)
      expect((yield* telegramStatus(agent)).detail).toContain("Bad Gateway")
      yield* TestClock.adjust(4000)
      yield* telegram.awaitCalls("getUpdates", 4)
      // The long poll holds until an update comes; its answer is what shows Telegram serves the bot again.
      yield* telegram.message({ from: { id: 5, first_name: "Eve" }, text: "hi" })
      while ((yield* telegramStatus(agent)).state !== "connected") yield* poll
      expect(yield* telegramStatus(agent)).toMatchObject({ state: "connected", detail: "" })
      yield* agent.stop
    }))

  it.scoped("a refused token (401) stops the channel with its reason; send() then fails with not_connected", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram({ token: "999:the-real-token" })
      const agent = yield* startAgent(agentFolder(model), { ...telegram, token: "999:a-revoked-token" })

      yield* telegram.awaitCalls("getMe", 1)
      while ((yield* telegramStatus(agent)).state !== "stopped") yield* poll
      const status = yield* telegramStatus(agent)
      expect(status.detail).toContain("Unauthorized")
      expect(status.detail).toContain("TELEGRAM_BOT_TOKEN")
      expect(status.detail).not.toContain("a-revoked-token")
      // Stopped for good: no retry, however long we wait.
      yield* TestClock.adjust("10 minutes")
      yield* settle
      expect((yield* telegram.calls()).map((c) => c.method)).toEqual(["getMe"])

      const channel = Option.getOrThrow(yield* agent.channels.get("telegram"))
      const sent = yield* Effect.flip(channel.send("42", "hello"))
      expect(sent).toMatchObject({ _tag: "ChannelError", reason: "not_connected" })
      expect(sent.message).toContain("Unauthorized")
      yield* agent.stop
    }))

  it.scoped("an unreachable API is retried, and its error (the status detail, the log line) never shows the token", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model), { ...telegram, root: "http://127.0.0.1:1" })
      while ((yield* telegramStatus(agent)).state !== "reconnecting") yield* poll
      const status = yield* telegramStatus(agent)
      expect(status.detail).toContain("could not reach http://127.0.0.1:1")
      expect(status.detail).not.toContain(telegram.token)
      expect(status.detail).toContain("<token>")
      yield* agent.stop
    }))

  it.scoped("an update nested too deep is skipped alone, with the offset past it; the channel goes on polling", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model), telegram)
      const arrays = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}1${"]".repeat(depth)}`)
      const objects = (depth: number): unknown => JSON.parse(`${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`)
      const message = { message_id: 1, from: { id: 9, is_bot: false, first_name: "Mallory" }, chat: { id: 9, type: "private" } }
      // Deep where kern reads (the text), where it does not (a field it ignores), and the whole update; 1,000 deep,
      // ten times the limit (the fake server's own serializer fails on deeper answers).
      const deep = [
        { message: { ...message, text: arrays(1000) } },
        { message: { ...message, text: "hi", reply_markup: objects(1000) } },
        { edited_message: arrays(1000) },
        { message: { ...message, text: "hi", entities: [{ type: "bold", offset: 0, length: 1, extra: [objects(500)] }] } }
      ]
      for (const update of deep) yield* telegram.update(update)
      const eve = yield* telegram.message({ from: { id: 5, first_name: "Eve" }, text: "hi" })
      // Eve is a stranger: her message is answered with a pairing code, so the poll went past the deep updates.
      const chat = yield* telegram.awaitChat(5, (messages) => messages.length > 0)
      expect(chat[0]?.text).toContain("kern pair")
      // The next poll confirms every update, the deep ones included.
      while (!(yield* telegram.calls("getUpdates")).some((call) => call.body["offset"] === eve + 1)) yield* poll
      expect(yield* telegram.unconfirmed).toEqual([])
      expect(yield* telegramStatus(agent)).toMatchObject({ state: "connected" })
      yield* agent.stop
    }), 120_000)
})
