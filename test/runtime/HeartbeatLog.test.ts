import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { HeartbeatLog, HeartbeatState } from "../../src/runtime/HeartbeatLog.js"
import { databases, reopenable } from "../support/databases.js"

// The heartbeat's one row on both databases: what `kern status` reads and what the next runtime keeps.

const t0 = 1_795_000_000_000

describe.each(databases)("the heartbeat's record on $dialect", (database) => {
  it.effect("nothing recorded reads as no tick and no due time", () =>
    Effect.gen(function*() {
      const log = yield* HeartbeatLog
      expect(yield* log.state).toEqual(new HeartbeatState({ lastAtMs: null, outcome: null, reason: "", nextAtMs: null }))
      expect(yield* log.due).toEqual(Option.none())
    }).pipe(Effect.provide(HeartbeatLog.Default.pipe(Layer.provide(database.layer)))))

  it.scoped("records the last tick and the next; the due time outlives the runtime that set it", () =>
    Effect.gen(function*() {
      const db = yield* reopenable(database)
      const run = <A, E>(body: (log: HeartbeatLog) => Effect.Effect<A, E>) =>
        Effect.flatMap(HeartbeatLog, body).pipe(Effect.provide(HeartbeatLog.Default.pipe(Layer.provide(db))))
      yield* run((log) =>
        Effect.gen(function*() {
          yield* log.setNext(t0 + 3_600_000)
          yield* log.record(t0, "skipped", "outside active hours (08:00-22:00)")
          expect(yield* log.state).toEqual(
            new HeartbeatState({ lastAtMs: t0, outcome: "skipped", reason: "outside active hours (08:00-22:00)", nextAtMs: t0 + 3_600_000 })
          )
          // The runtime stops: no next tick while none runs.
          yield* log.setNext(null)
        }))
      const after = yield* run((log) => Effect.all({ state: log.state, due: log.due }))
      expect(after.state).toMatchObject({ lastAtMs: t0, outcome: "skipped", nextAtMs: null })
      expect(after.due).toEqual(Option.some(t0 + 3_600_000))
    }))

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
    }).pipe(Effect.provide(HeartbeatLog.Default.pipe(Layer.provide(database.layer)))))
})
