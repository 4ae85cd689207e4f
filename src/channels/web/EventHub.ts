import { Chunk, DateTime, Effect, Option, PubSub, Queue, Ref, Stream } from "effect"
import type { AgentEvent, AgentEventInput } from "./api.js"

/** Events kept for clients that reconnect with Last-Event-ID. */
export const replayCapacity = 1_000

/**
 * Events a client may fall behind by before it is dropped: it reconnects with Last-Event-ID and catches up from the
 * replay buffer (or gets a reset), so one stalled browser tab cannot make the agent hold every event for it.
 */
export const maxBehind = 10_000

interface HubState {
  readonly next: number
  /** The last `replayCapacity` events, oldest first. */
  readonly buffer: ReadonlyArray<AgentEvent>
}

/**
 * Every event of the agent, numbered: each as its source made it, with only `seq` and `at` added. One sequence per
 * server, starting from the start time in microseconds, so a client's Last-Event-ID from an earlier process is always
 * older than anything this one has (it gets a reset).
 * Publishing and subscribing take the same lock, so a new subscriber's replay and its live events neither overlap
 * nor leave a gap.
 */
export class EventHub extends Effect.Service<EventHub>()("kern/channels/web/EventHub", {
  scoped: Effect.gen(function*() {
    const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<AgentEvent>(), PubSub.shutdown)
    const start = yield* DateTime.now
    const state = yield* Ref.make<HubState>({ next: DateTime.toEpochMillis(start) * 1000 + 1, buffer: [] })
    const lock = yield* Effect.makeSemaphore(1)
    const listeners = yield* Ref.make(0)

    const publish = (input: AgentEventInput): Effect.Effect<AgentEvent> =>
      lock.withPermits(1)(Effect.gen(function*() {
        const at = DateTime.formatIso(yield* DateTime.now)
        const event = yield* Ref.modify(state, (s): readonly [AgentEvent, HubState] => {
          const numbered: AgentEvent = { ...input, seq: s.next, at }
          const buffer = s.buffer.length >= replayCapacity ? [...s.buffer.slice(1 - replayCapacity), numbered] : [...s.buffer, numbered]
          return [numbered, { next: s.next + 1, buffer }]
        })
        yield* PubSub.publish(pubsub, event)
        return event
      }))

    /** What a client that saw up to `lastId` missed: the buffered events after it, or a reset when some are gone. */
    const replayAfter = (s: HubState, lastId: number, at: string): ReadonlyArray<AgentEvent> => {
      const oldest = s.buffer[0]?.seq ?? s.next
      if (lastId === s.next - 1) return []
      if (lastId >= oldest - 1 && lastId < s.next - 1) return s.buffer.filter((event) => event.seq > lastId)
      return [{ type: "reset", seq: oldest - 1, at, missedFrom: lastId + 1 }, ...s.buffer]
    }

    /**
     * The events from now on, after those missed since `lastId` (when given). Ends when the client falls more than
     * `maxBehind` events behind. The subscription lives in the caller's scope.
     */
    const subscribe = (lastId: Option.Option<number>) =>
      Effect.gen(function*() {
        const at = DateTime.formatIso(yield* DateTime.now)
        const [subscription, replay] = yield* lock.withPermits(1)(Effect.all([
          PubSub.subscribe(pubsub),
          Effect.map(Ref.get(state), (s) => Option.match(lastId, { onNone: () => [], onSome: (id) => replayAfter(s, id, at) }))
        ]))
        yield* Effect.acquireRelease(Ref.update(listeners, (n) => n + 1), () => Ref.update(listeners, (n) => n - 1))
        const live = Stream.repeatEffectOption(
          Effect.flatMap(Queue.size(subscription), (behind) =>
            behind > maxBehind ? Effect.fail(Option.none()) : Queue.takeBetween(subscription, 1, 256))
        ).pipe(Stream.flattenChunks)
        return Stream.concat(Stream.fromChunk(Chunk.fromIterable(replay)), live)
      })

    return { publish, subscribe, listeners: Ref.get(listeners) } as const
  })
}) {}
