import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, TestClock } from "effect"
import { envelopeLine, isNoReply, localIso } from "../../src/session/envelope.js"
import { makeReplyFilter } from "../../src/turn/replyFilter.js"
import { heartbeatInterface, MessageQueue } from "../../src/turn/MessageQueue.js"

const msg = (channel: string, text: string, iface = "telegram") => ({ interface: iface, channel, userId: "u1", text })

describe("MessageQueue", () => {
  it.effect("50 concurrent messages from 3 channels: FIFO turns, same-channel injection, others wait", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue
      const channels = ["a", "b", "c"]
      // Each channel sends its messages in order; the three channels race each other.
      yield* Effect.forEach(channels, (channel) =>
        Effect.forEach(Array.from({ length: 50 }, (_, i) => i).filter((i) => i % 3 === channels.indexOf(channel)), (i) =>
          queue.offer(msg(channel, `${channel}${i}`))), { concurrency: "unbounded" })
      assert.strictEqual(yield* queue.size, 50)

      const seen: Array<string> = []
      const turns: Array<{ first: string; injected: ReadonlyArray<string> }> = []
      while ((yield* queue.size) > 0) {
        const first = yield* queue.next
        const injected = (yield* queue.takeInjectable("main")).map((m) => m.text)
        for (const text of injected) assert.strictEqual(text[0], first.channel, "only the active channel is injected")
        seen.push(first.text, ...injected)
        turns.push({ first: first.text, injected })
        yield* queue.endTurn("main")
      }
      assert.strictEqual(seen.length, 50)
      assert.strictEqual(new Set(seen).size, 50, "nothing lost or duplicated")
      for (const channel of channels) {
        const order = seen.filter((text) => text.startsWith(channel)).map((text) => Number(text.slice(1)))
        assert.deepStrictEqual(order, [...order].sort((x, y) => x - y), `channel ${channel} kept its order`)
      }
      assert.strictEqual(turns.length, 3, "each channel's backlog is injected into its own turn")
    }).pipe(Effect.provide(MessageQueue.Default)))

  it.effect("turns start in arrival order and a message arriving mid-turn on the active channel is injectable", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue
      yield* queue.offer(msg("web:1", "first", "web"))
      yield* queue.offer(msg("tg:9", "other channel"))
      const turn = yield* queue.next
      assert.strictEqual(turn.text, "first")
      assert.deepStrictEqual(yield* queue.takeInjectable("main"), [])
      yield* queue.offer(msg("web:1", "follow-up", "web"))
      assert.deepStrictEqual((yield* queue.takeInjectable("main")).map((m) => m.text), ["follow-up"])
      yield* queue.endTurn("main")
      assert.strictEqual((yield* queue.next).text, "other channel")
    }).pipe(Effect.provide(MessageQueue.Default)))

  it.effect("a heartbeat turn has no active channel: nothing is injected into it", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue
      yield* queue.offer({ interface: heartbeatInterface, channel: "heartbeat", userId: "system", text: "[heartbeat]" })
      const beat = yield* queue.next
      assert.strictEqual(beat.interface, heartbeatInterface)
      assert.isTrue(Option.isNone(yield* queue.activeChannelOf("main")))
      yield* queue.offer(msg("heartbeat", "user on a channel named like it"))
      assert.deepStrictEqual(yield* queue.takeInjectable("main"), [])
    }).pipe(Effect.provide(MessageQueue.Default)))

  it.effect("messages of the inbox line up in the inbox's order, however their hand-overs race", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue
      const durable = (inboxId: number) => queue.offer(msg("a", `m${inboxId}`), { inboxId, receivedAtMs: inboxId })
      yield* durable(3)
      yield* queue.offer({ interface: heartbeatInterface, channel: "heartbeat", userId: "system", text: "[heartbeat]" })
      yield* durable(1)
      yield* durable(4)
      yield* durable(2)
      const order: Array<string> = []
      while ((yield* queue.size) > 0) {
        order.push((yield* queue.next).text)
        yield* queue.endTurn("main")
      }
      assert.deepStrictEqual(order, ["m1", "m2", "m3", "[heartbeat]", "m4"])
    }).pipe(Effect.provide(MessageQueue.Default)))

  it.effect("next waits until a message arrives", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue
      const waiting = yield* Effect.fork(queue.next)
      yield* TestClock.adjust("1 second")
      assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
      yield* queue.offer(msg("a", "hello"))
      assert.strictEqual((yield* Fiber.join(waiting)).text, "hello")
    }).pipe(Effect.provide(MessageQueue.Default)))
})

describe("envelope", () => {
  it("formats interface, channel, user and local time with offset", () => {
    const ms = Date.UTC(2026, 10, 22, 9, 30, 0)
    assert.strictEqual(
      envelopeLine({ interface: "telegram", channel: "dm:42", userId: "42", time: localIso(ms, "Asia/Kolkata") }),
      "[via telegram, dm:42, user: 42, time: 2026-11-22T15:00:00+05:30]"
    )
    assert.strictEqual(localIso(ms, "UTC"), "2026-11-22T09:30:00+00:00")
  })

  it("recognises NO_REPLY alone or at the end, not in the middle", () => {
    assert.isTrue(isNoReply("NO_REPLY"))
    assert.isTrue(isNoReply("saved the note.\nNO_REPLY"))
    assert.isTrue(isNoReply("  NO_REPLY  "))
    assert.isFalse(isNoReply("I will answer NO_REPLY later, here is the answer"))
    assert.isFalse(isNoReply("Done."))
  })
})

describe("reply filter", () => {
  const stream = (deltas: ReadonlyArray<string>) => {
    const filter = makeReplyFilter()
    const reply = deltas.join("")
    return deltas.map((d) => filter.push(d)).join("") + filter.end(reply)
  }

  it("streams text as it comes, holding back only a possible NO_REPLY", () => {
    expect(stream(["Saved ", "the note. ", "All good."])).toBe("Saved the note. All good.")
    expect(stream(["NO_", "REPLY"])).toBe("")
    expect(stream(["Saved the note.\n", "NO_REPLY"])).toBe("Saved the note.")
    expect(stream(["I will answer NO_REPLY later, here it is."])).toBe("I will answer NO_REPLY later, here it is.")
  })

  it("a tool call flushes what was held: the text before it is shown before it, never a trailing marker", () => {
    const filter = makeReplyFilter()
    expect(filter.push("Let me look.")).toBe("Le")
    expect(filter.flush()).toBe("t me look.")
    expect(filter.push("x NO_REPLY")).toBe("")
    expect(filter.flush()).toBe("x ")
    expect(filter.push("Found it.")).toBe("")
    expect(filter.end("Found it.")).toBe("Found it.")
  })

  it("shows most of a long reply before the turn ends", () => {
    const filter = makeReplyFilter()
    expect(filter.push("a".repeat(100)).length).toBeGreaterThan(80)
  })

  it.effect("conversations: one turn per conversation at a time, others' messages taken beside it, injection within its own", () =>
    Effect.gen(function*() {
      const queue = yield* MessageQueue
      yield* queue.offer({ ...msg("555", "friend 1"), userId: "555", conversation: "telegram-555" })
      yield* queue.offer({ ...msg("555", "friend 2"), userId: "555", conversation: "telegram-555" })
      yield* queue.offer({ ...msg("terminal", "operator 1", "terminal"), userId: "operator" })
      const friend = yield* queue.next
      assert.strictEqual(friend.text, "friend 1")
      assert.strictEqual(friend.conversation, "telegram-555")
      // The friend's second message waits for the friend's turn (or joins it); the operator's turn starts beside it.
      const operator = yield* queue.next
      assert.strictEqual(operator.text, "operator 1")
      assert.strictEqual(operator.conversation, "main")
      assert.deepStrictEqual(yield* queue.takeInjectable("main"), [])
      assert.deepStrictEqual((yield* queue.takeInjectable("telegram-555")).map((m) => m.text), ["friend 2"])
      yield* queue.offer({ ...msg("555", "friend 3"), userId: "555", conversation: "telegram-555" })
      yield* queue.endTurn("main")
      // Both conversations are busy until the friend's turn ends: nothing more is handed out.
      const waiting = yield* Effect.fork(queue.next)
      yield* queue.offer({ ...msg("terminal", "operator 2", "terminal"), userId: "operator" })
      assert.strictEqual((yield* Fiber.join(waiting)).text, "operator 2", "the operator's next message is not held up by the friend's turn")
      const friendNext = yield* Effect.fork(queue.next)
      yield* queue.endTurn("telegram-555")
      assert.strictEqual((yield* Fiber.join(friendNext)).text, "friend 3")
      assert.isFalse(yield* queue.idle)
    }).pipe(Effect.provide(MessageQueue.Default)))
})
