import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { HeartbeatLog } from "../../src/runtime/HeartbeatLog.js"
import { databases } from "../support/databases.js"

describe.each(databases)("the heartbeat's record in kern.db, on $dialect", ({ layer }) => {
  it.effect("whether anything happened since the last heartbeat: assumed before the first, then as the runtime last set it", () =>
    Effect.gen(function*() {
      const log = yield* HeartbeatLog
      // No row yet: what an earlier process saw is not known, so the next heartbeat runs.
      expect(yield* log.pendingActivity).toBe(true)
      yield* log.setPendingActivity(false)
      expect(yield* log.pendingActivity).toBe(false)
      // The row's other fields are left as they were, and the flag stays what it was set to when they change.
      yield* log.setNext(90_000)
      yield* log.record(60_000, "ran", "nothing to report")
      expect(yield* log.pendingActivity).toBe(false)
      expect(yield* log.due).toEqual(Option.some(90_000))
      expect(yield* log.state).toMatchObject({ lastAtMs: 60_000, outcome: "ran", nextAtMs: 90_000 })
      yield* log.setPendingActivity(true)
      expect(yield* log.pendingActivity).toBe(true)
    }).pipe(Effect.provide(HeartbeatLog.Default.pipe(Layer.provideMerge(layer)))))
})
