import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Option, Queue, Stream, TestClock } from "effect"
import type { AgentEvent } from "../../../src/channels/web/api.js"
import { EventHub, replayCapacity } from "../../../src/channels/web/EventHub.js"
import { eventFrame, keepaliveFrame, openFrame, parseLastEventId, sseFrames } from "../../../src/channels/web/sse.js"

const delta = (turnId: string, text: string) => ({ type: "text-delta", turnId, conversationId: "web:1", delta: text }) as const

/** Takes `n` items of a stream forked into the test's scope. */
const collect = <A>(stream: Stream.Stream<A>) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<A>()
    yield* Effect.forkScoped(Stream.runForEach(stream, (item) => Queue.offer(queue, item)))
    return (n: number) => Effect.map(Queue.takeN(queue, n), Chunk.toReadonlyArray)
  })

describe("EventHub", () => {
  it.scoped("numbers events one by one, and a subscriber gets them live, in order", () =>
    Effect.gen(function*() {
      const hub = yield* EventHub
      const take = yield* collect(yield* hub.subscribe(Option.none()))
      const a = yield* hub.publish(delta("1", "a"))
      const b = yield* hub.publish(delta("1", "b"))
      expect(b.seq).toBe(a.seq + 1)
      const got = yield* take(2)
      expect(got.map((e) => e.seq)).toEqual([a.seq, b.seq])
      expect(got[0]).toMatchObject({ type: "text-delta", turnId: "1", conversationId: "web:1", delta: "a" })
    }).pipe(Effect.provide(EventHub.Default)))

  it.scoped("Last-Event-ID: a reconnecting client gets exactly what it missed, then live events", () =>
    Effect.gen(function*() {
      const hub = yield* EventHub
      const first = yield* hub.publish(delta("1", "a"))
      yield* hub.publish(delta("1", "b"))
      yield* hub.publish(delta("1", "c"))
      const take = yield* collect(yield* hub.subscribe(Option.some(first.seq)))
      const live = yield* hub.publish(delta("1", "d"))
      const got = yield* take(3)
      expect(got.map((e) => e.type === "text-delta" ? e.delta : e.type)).toEqual(["b", "c", "d"])
      expect(got[2]!.seq).toBe(live.seq)
    }).pipe(Effect.provide(EventHub.Default)))

  it.scoped("a client up to date gets no replay; one older than the buffer gets a reset first, then the buffer", () =>
    Effect.gen(function*() {
      const hub = yield* EventHub
      const events: Array<AgentEvent> = []
      for (let i = 0; i < replayCapacity + 5; i++) events.push(yield* hub.publish(delta("1", String(i))))
      const last = events.at(-1)!
      const upToDate = yield* collect(yield* hub.subscribe(Option.some(last.seq)))
      const old = yield* collect(yield* hub.subscribe(Option.some(events[0]!.seq)))
      // An id from an earlier process (smaller than anything this hub numbered).
      const stranger = yield* collect(yield* hub.subscribe(Option.some(1)))
      const next = yield* hub.publish(delta("1", "next"))
      expect((yield* upToDate(1)).map((e) => e.seq)).toEqual([next.seq])
      const replayed = yield* old(replayCapacity + 2)
      expect(replayed[0]).toMatchObject({ type: "reset", missedFrom: events[0]!.seq + 1 })
      expect(replayed[1]!.seq).toBe(events[5]!.seq)
      expect(replayed.at(-1)!.seq).toBe(next.seq)
      expect((yield* stranger(1))[0]).toMatchObject({ type: "reset", missedFrom: 2 })
    }).pipe(Effect.provide(EventHub.Default)))

  it.scoped("the listener count follows subscriptions and their scopes", () =>
    Effect.gen(function*() {
      const hub = yield* EventHub
      const fiber = yield* Effect.fork(Effect.scoped(Effect.zipRight(hub.subscribe(Option.none()), Effect.never)))
      while ((yield* hub.listeners) === 0) yield* Effect.yieldNow()
      expect(yield* hub.listeners).toBe(1)
      yield* Fiber.interrupt(fiber)
      expect(yield* hub.listeners).toBe(0)
    }).pipe(Effect.provide(EventHub.Default)))
})

describe("SSE frames", () => {
  it.scoped("a connected comment first, each event with its id, and a keepalive comment every 15 s on the Clock", () =>
    Effect.gen(function*() {
      const hub = yield* EventHub
      const take = yield* collect(yield* sseFrames(hub, Option.none()))
      expect(yield* take(1)).toEqual([openFrame])
      const event = yield* hub.publish(delta("7", "hi"))
      const [frame] = yield* take(1)
      expect(frame).toBe(eventFrame(event))
      expect(frame).toMatch(new RegExp(`^id: ${event.seq}\nevent: text-delta\ndata: \\{.*"turnId":"7".*\\}\n\n$`))
      // Nothing but events until 15 s pass.
      yield* TestClock.adjust("14 seconds")
      yield* hub.publish(delta("7", "again"))
      expect((yield* take(1))[0]).toContain("again")
      yield* TestClock.adjust("1 second")
      expect(yield* take(1)).toEqual([keepaliveFrame])
      yield* TestClock.adjust("15 seconds")
      expect(yield* take(1)).toEqual([keepaliveFrame])
    }).pipe(Effect.provide(EventHub.Default)))

  it("a reset frame carries no id, so the browser keeps its Last-Event-ID", () => {
    expect(eventFrame({ type: "reset", seq: 5, at: "2026-01-01T00:00:00.000Z", missedFrom: 3 })).not.toContain("id:")
  })

  it("Last-Event-ID: digits only", () => {
    expect(parseLastEventId("42")).toEqual(Option.some(42))
    for (const bad of [undefined, "", "abc", "-1", "1e3", "12345678901234567890"]) expect(parseLastEventId(bad)).toEqual(Option.none())
  })
})
