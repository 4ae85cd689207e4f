import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, TestClock } from "effect"
import type { QueuedMessage } from "../../../src/turn/MessageQueue.js"
import { noReplyEmit } from "../../../src/turn/replyFilter.js"
import { incomingOf, noUsage, type TurnEventBody, turnIdsOf } from "../../../src/turn/TurnEvent.js"
import * as Api from "../../../src/channels/telegram/api.js"
import { makeReplies } from "../../../src/channels/telegram/replies.js"
import * as ReplyPlaceholders from "../../../src/channels/ReplyPlaceholders.js"
import * as Database from "../../../src/storage/Database.js"
import { Failures, make as makeFakeTelegram } from "../../support/fakeTelegram.js"

/** How often a wait for a condition looks again. */
const poll = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 50)))

/**
 * Real time for a call that is wrongly due to reach the fake server before the test says none came. Absence has no
 * event to wait for, so this is a window, of 2 s so that a busy machine cannot hide such a call.
 */
const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 2_000)))

/** Waits until a fiber sleeps until a time in [from, to] on the TestClock (so that moving the clock wakes it). */
const sleepingWithin = (from: number, to: number) =>
  Effect.gen(function*() {
    while (!Chunk.some(yield* TestClock.sleeps(), (at) => at >= from && at <= to)) yield* poll
  })

const sleepingUntil = (dueMs: number) => sleepingWithin(dueMs, dueMs)

const message = (turnId: string): QueuedMessage => ({
  id: Number(turnId),
  interface: "telegram",
  conversation: "main",
  channel: "42",
  userId: "42",
  text: "hi",
  receivedAtMs: 0,
  turnId
})

/** The reply pipeline on its own, driven event by event on the TestClock against the fake Bot API. */
const setup = Effect.gen(function*() {
  const telegram = yield* makeFakeTelegram()
  const http = yield* Layer.build(NodeHttpClient.layerUndici)
  const api = yield* Api.make({ root: telegram.root, token: telegram.token }).pipe(Effect.provide(http))
  const placeholders = yield* Layer.build(ReplyPlaceholders.layerSql.pipe(Layer.provide(Database.layerMemory)))
  const handle = yield* makeReplies(api).pipe(Effect.provide(placeholders))
  // Events as a turn emits them: its `incoming` first (what the replies route by), then the rest through the source's
  // NO_REPLY filter (src/turn/replyFilter.ts), nothing else.
  const emit = (turnId: string) => {
    const queued = message(turnId)
    const filtered = noReplyEmit(handle)
    let started = false
    return (event: TurnEventBody) =>
      Effect.suspend(() => {
        const first = started ? Effect.void : handle({ ...incomingOf(queued), ...turnIdsOf(queued) })
        started = true
        return Effect.zipRight(first, filtered({ ...event, ...turnIdsOf(queued) }))
      })
  }
  return { telegram, emit }
})

describe("Telegram replies", () => {
  it.scoped("stream into a placeholder with at most one write a second, a tool line the text replaces, typing kept alive", () =>
    Effect.gen(function*() {
      const { telegram, emit } = yield* setup
      const turn = emit("1")
      yield* turn({ type: "thinking", step: 1 })
      yield* telegram.awaitCalls("sendMessage", 1)
      yield* telegram.awaitCalls("sendChatAction", 1)

      yield* turn({ type: "text-delta", delta: "Here is the first part of the answer, " })
      yield* sleepingUntil(1000)
      yield* TestClock.adjust(999)
      yield* settle
      expect(yield* telegram.calls("editMessageText")).toEqual([])
      yield* TestClock.adjust(1)
      const [first] = yield* telegram.awaitCalls("editMessageText", 1)
      // The filter holds the last characters back (a NO_REPLY might end them).
      expect(first!.body["text"]).toBe("Here is the first part of th")

      yield* turn({ type: "text-delta", delta: "and more" })
      yield* turn({ type: "tool-call", id: "c1", name: "bash", params: { command: "ls" } })
      yield* sleepingUntil(2000)
      yield* TestClock.adjust(500)
      yield* settle
      expect((yield* telegram.calls("editMessageText")).length).toBe(1)
      yield* TestClock.adjust(500)
      const edits = yield* telegram.awaitCalls("editMessageText", 2)
      expect(edits[1]!.body["text"]).toBe("Here is the first part of the answer, and more\n\n<i>⚙ bash…</i>")

      // A long tool: the typing indicator is sent again before it fades (4 s after the first one was answered, which
      // on a busy machine can be after the clock moved on).
      yield* sleepingWithin(4000, 6000)
      yield* TestClock.adjust(4000)
      yield* telegram.awaitCalls("sendChatAction", 2)

      yield* turn({ type: "tool-result", id: "c1", name: "bash", isError: false, text: "a b", durationMs: 5 })
      yield* turn({ type: "thinking", step: 2 })
      yield* turn({ type: "text-delta", delta: "The result is **42**." })
      yield* turn({ type: "finish", reply: "The result is **42**.", steps: 2, usage: noUsage, delivered: true })
      yield* telegram.awaitCalls("editMessageText", 3)
      const [chat] = yield* telegram.chat(42)
      expect(chat!.text).toBe("Here is the first part of the answer, and more\n\nThe result is <b>42</b>.")

      const writes = (yield* telegram.calls()).filter((c) => c.method === "sendMessage" || c.method === "editMessageText")
      expect(writes.map((w) => w.atMs)).toEqual([0, 1000, 2000, 6000])
      // Typing stops with the turn.
      yield* TestClock.adjust("20 seconds")
      yield* settle
      expect((yield* telegram.calls("sendChatAction")).length).toBe(2)
    }))

  it.scoped("a turn without a reply (NO_REPLY) takes its placeholder back; an edit Telegram cannot parse goes as plain text", () =>
    Effect.gen(function*() {
      const { telegram, emit } = yield* setup
      const silent = emit("1")
      yield* silent({ type: "thinking", step: 1 })
      yield* telegram.awaitCalls("sendMessage", 1)
      yield* silent({ type: "text-delta", delta: "NO_REPLY" })
      yield* silent({ type: "finish", reply: "NO_REPLY", steps: 1, usage: noUsage, delivered: false })
      yield* TestClock.adjust(1000)
      yield* telegram.awaitCalls("deleteMessage", 1)
      expect(yield* telegram.chat(42)).toEqual([])
      expect(yield* telegram.calls("editMessageText")).toEqual([])

      const spoken = emit("2")
      yield* spoken({ type: "thinking", step: 1 })
      yield* telegram.awaitCalls("sendMessage", 2)
      yield* telegram.fail("editMessageText", Failures.cantParse)
      yield* spoken({ type: "text-delta", delta: "Use **care** & <tags>" })
      yield* spoken({ type: "finish", reply: "Use **care** & <tags>", steps: 1, usage: noUsage, delivered: true })
      yield* TestClock.adjust(1000)
      const edits = yield* telegram.awaitCalls("editMessageText", 2)
      expect(edits.map((e) => [e.body["text"], e.body["parse_mode"]])).toEqual([
        ["Use <b>care</b> &amp; &lt;tags&gt;", "HTML"],
        ["Use care & <tags>", undefined]
      ])
      expect((yield* telegram.chat(42)).map((m) => m.text)).toEqual(["Use care & <tags>"])
    }))
})
