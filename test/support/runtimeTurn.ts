import { Effect, Queue } from "effect"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"

/** The events of one turn of a running agent, read from a subscription to its events, up to its finish. */
export const turnEvents = (events: Queue.Dequeue<TurnEvent>, turnId: string) =>
  Effect.gen(function*() {
    const seen: Array<TurnEvent> = []
    for (;;) {
      const event = yield* Queue.take(events)
      if (event.turnId !== turnId) continue
      seen.push(event)
      if (event.type === "finish") return seen
    }
  }).pipe(Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error(`turn ${turnId} never finished`) }))
