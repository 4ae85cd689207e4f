import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { HeartbeatLog } from "../../../src/runtime/HeartbeatLog.js"
import type { ScheduleDraft } from "../../../src/tools/schedules/newSchedule.js"
import { ScheduleStore } from "../../../src/tools/schedules/ScheduleStore.js"
import { databases } from "../../support/databases.js"

// The schedules' repository on both databases: the counts and latest runs the listings show, settling (a run recorded
// once, nothing done for a schedule moved meanwhile), removal with its runs, and the summary `kern status` prints.

const minute = 60_000
const t0 = Date.UTC(2026, 10, 27, 9, 0)
const owner = { origin: { interface: "telegram", channel: "42", userId: "42" }, deliverTo: "telegram:42", createdBy: "telegram:42" }

const cron = (nextDueMs: number): ScheduleDraft => ({
  kind: "cron",
  cron: "*/5 * * * *",
  atMs: null,
  timezone: "Europe/Berlin",
  prompt: "check the queue",
  misfire: "skip",
  graceMs: 10 * minute,
  nextDueMs
})

const oneShot = (atMs: number): ScheduleDraft => ({ ...cron(atMs), kind: "at", cron: null, atMs, misfire: "once", prompt: "call the dentist" })

describe.each(databases)("the schedule store on $dialect", ({ layer }) => {
  const storeLayer = Layer.mergeAll(ScheduleStore.Default, HeartbeatLog.Default).pipe(Layer.provideMerge(layer))

  it.effect("adds schedules as given and lists them with their fired and missed runs", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(t0)
      const store = yield* ScheduleStore
      const every = yield* store.add(cron(t0 + 5 * minute), owner)
      const once = yield* store.add(oneShot(t0 + 60 * minute), { ...owner, deliverTo: null, createdBy: "operator" })
      expect(every).toMatchObject({ kind: "cron", cron: "*/5 * * * *", atMs: null, timezone: "Europe/Berlin", deliverTo: "telegram:42", createdAtMs: t0 })
      expect(once).toMatchObject({ kind: "at", cron: null, atMs: t0 + 60 * minute, deliverTo: null, nextDueMs: t0 + 60 * minute })
      expect(once.id).toBeGreaterThan(every.id)
      expect(Option.getOrThrow(yield* store.get(once.id))).toEqual(once)
      expect(Option.isNone(yield* store.get(987_654))).toBe(true)

      const slots = [5, 10, 15, 20].map((m) => t0 + m * minute)
      yield* store.settle(every.id, slots[0]!, { fired: [slots[3]!], missed: [slots[0]!, slots[1]!, slots[2]!] }, t0 + 25 * minute)
      const [listed, other] = yield* store.list
      expect(listed).toMatchObject({ id: every.id, fired: 1, missed: 3, lastFiredMs: slots[3], lastMissedMs: slots[2], nextDueMs: t0 + 25 * minute })
      expect(other).toMatchObject({ id: once.id, fired: 0, missed: 0, lastFiredMs: null, lastMissedMs: null })
      expect(yield* store.earliest).toEqual(Option.some(t0 + 25 * minute))
    }).pipe(Effect.provide(storeLayer)))

  it.effect("settling records a run once, and does nothing for a schedule moved meanwhile", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(t0)
      const store = yield* ScheduleStore
      const row = yield* store.add(cron(t0 + 5 * minute), owner)
      yield* store.settle(row.id, t0 + 5 * minute, { fired: [t0 + 5 * minute], missed: [] }, t0 + 10 * minute)
      // A second settle from the old due time (another process got there first): nothing changes.
      yield* store.settle(row.id, t0 + 5 * minute, { fired: [], missed: [t0 + 5 * minute] }, null)
      expect((yield* store.list)[0]).toMatchObject({ fired: 1, missed: 0, nextDueMs: t0 + 10 * minute })
      // The same run recorded again from the current due time keeps its first outcome.
      yield* store.settle(row.id, t0 + 10 * minute, { fired: [], missed: [t0 + 5 * minute, t0 + 10 * minute] }, null)
      expect((yield* store.list)[0]).toMatchObject({ fired: 1, missed: 1, lastMissedMs: t0 + 10 * minute, nextDueMs: null })
      expect(yield* store.due(t0 + 60 * minute)).toEqual([])
      expect(yield* store.earliest).toEqual(Option.none())
    }).pipe(Effect.provide(storeLayer)))

  it.effect("due lists what is due by time then id; removing a schedule removes its runs", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(t0)
      const store = yield* ScheduleStore
      const late = yield* store.add(oneShot(t0 + 30 * minute), owner)
      const early = yield* store.add(oneShot(t0 + 10 * minute), owner)
      const same = yield* store.add(oneShot(t0 + 10 * minute), owner)
      expect((yield* store.due(t0 + 10 * minute)).map((row) => row.id)).toEqual([early.id, same.id])
      expect((yield* store.due(t0 + 30 * minute)).map((row) => row.id)).toEqual([early.id, same.id, late.id])
      yield* store.settle(early.id, t0 + 10 * minute, { fired: [], missed: [t0 + 10 * minute] }, null)
      expect(yield* store.summary).toMatchObject({ schedules: 3, active: 2, missed: 1, lastMissedMs: t0 + 10 * minute })
      expect(yield* store.remove(early.id)).toBe(true)
      expect(yield* store.remove(early.id)).toBe(false)
      expect(yield* store.summary).toMatchObject({ schedules: 2, active: 2, missed: 0, lastMissedMs: null })
    }).pipe(Effect.provide(storeLayer)))

  it.effect("the summary of an empty store, and the heartbeat's next time as the running agent recorded it", () =>
    Effect.gen(function*() {
      const store = yield* ScheduleStore
      const heartbeat = yield* HeartbeatLog
      expect({ ...(yield* store.summary) }).toEqual({ schedules: 0, active: 0, missed: 0, lastMissedMs: null })
      expect(yield* store.heartbeatNext).toBeNull()
      yield* heartbeat.setNext(t0 + 60 * minute)
      expect(yield* store.heartbeatNext).toBe(t0 + 60 * minute)
      yield* heartbeat.setNext(null)
      expect(yield* store.heartbeatNext).toBeNull()
    }).pipe(Effect.provide(storeLayer)))
})
