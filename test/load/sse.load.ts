import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Ref, Schedule, Stream } from "effect"
import type { AgentEvent } from "../../src/channels/web/api.js"
import { startServer } from "../channels/web/harness.js"
import { FakeReply } from "../support/fakeModelServer.js"

const clients = 50
const perSecond = 20
const seconds = 30
const messages = perSecond * seconds

interface Seen {
  readonly seq: number
  readonly type: AgentEvent["type"]
  readonly messageId?: string
}

/** The heap still in use after a full collection (the load config runs node with --expose-gc). */
const retainedHeap = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error("run with --expose-gc (npm run test:load)")
  gc()
  return process.memoryUsage().heapUsed
}

const summary = (event: AgentEvent): Seen =>
  event.type === "incoming" ? { seq: event.seq, type: event.type, messageId: event.messageId } : { seq: event.seq, type: event.type }

/**
 * Load on loopback, bounded in count and time: 50 SSE clients while 20 messages a second arrive for 30 s. Every
 * client must get every event, in order, with no gap, and the process's RSS must stay bounded. Heavy: run with
 * `npm run test:load`, never in `npm test`.
 */
describe("load", () => {
  it.live(`${clients} SSE clients, ${perSecond} messages/s for ${seconds} s: every client gets every event in order; RSS stays bounded`, () =>
    Effect.scoped(Effect.gen(function*() {
      const { client, runtime } = yield* startServer({ model: { record: false, fallback: FakeReply.text("ok") } })
      const baseline = process.memoryUsage().rss
      const retainedBefore = retainedHeap()
      const peak = yield* Ref.make(baseline)
      const sample = Effect.flatMap(Effect.sync(() => process.memoryUsage().rss), (rss) => Ref.update(peak, (p) => Math.max(p, rss)))
      yield* Effect.forkScoped(Effect.repeat(sample, Schedule.spaced("250 millis")))
      const received = yield* Effect.forEach(Array.from({ length: clients }), () =>
        Effect.gen(function*() {
          const events = yield* client.events()
          // Only what the checks need, so the test's own memory does not hide the server's.
          const seen = yield* Ref.make<Array<Seen>>([])
          const fiber = yield* Effect.forkScoped(Stream.runForEach(events, (event) => Ref.update(seen, (all) => (all.push(summary(event)), all))))
          return { seen, fiber }
        }))
      const start = yield* Clock.currentTimeMillis
      const accepted: Array<string> = []
      for (let i = 0; i < messages; i++) {
        // Paced against the clock, not by sleeping a fixed step, so slow posts do not stretch the run.
        const due = start + (i * 1000) / perSecond
        const now = yield* Clock.currentTimeMillis
        if (due > now) yield* Effect.sleep(Duration.millis(due - now))
        const { turnId } = yield* client.send({ text: `message ${i}`, channel: `load-${i % 7}` })
        accepted.push(turnId)
      }
      // Every message answered (its own turn, or injected into one of its channel), then the last events delivered.
      while (!(yield* runtime.idle)) yield* Effect.sleep("100 millis")
      const reference = yield* Ref.get(received[0]!.seen)
      const lastSeq = reference.at(-1)!.seq
      for (const { seen } of received) {
        while (((yield* Ref.get(seen)).at(-1)?.seq ?? 0) < lastSeq) yield* Effect.sleep("50 millis")
      }
      const retainedAfter = retainedHeap()
      for (const { fiber } of received) yield* Fiber.interrupt(fiber)
      const seqs = reference.map((e) => e.seq)
      expect(seqs.every((seq, i) => i === 0 || seq === seqs[i - 1]! + 1)).toBe(true)
      const incoming = new Set(reference.flatMap((e) => e.messageId === undefined ? [] : [e.messageId]))
      expect(accepted.every((id) => incoming.has(id))).toBe(true)
      expect(reference.filter((e) => e.type === "finish").length).toBeGreaterThan(0)
      for (const { seen } of received) {
        expect((yield* Ref.get(seen)).map((e) => e.seq)).toEqual(seqs)
      }
      const grown = (yield* Ref.get(peak)) - baseline
      const kept = retainedAfter - retainedBefore
      const mb = (bytes: number) => Math.round(bytes / 2 ** 20)
      console.log(
        `load: ${messages} messages, ${seqs.length} events to each of ${clients} clients; RSS ${mb(baseline)} MB, peak +${mb(grown)} MB; ` +
          `heap kept after GC +${mb(kept)} MB (the clients' own records of ${seqs.length * clients} events included)`
      )
      // What the process keeps is what matters (a peak is the collector's choice): the replay buffer, the sessions'
      // messages and the test's records, not every event sent to every client.
      expect(kept).toBeLessThan(128 * 2 ** 20)
      expect(grown).toBeLessThan(768 * 2 ** 20)
    })), 240_000)
})
