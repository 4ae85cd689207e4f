import { describe, expect, it } from "@effect/vitest"
import { Context, type Duration, Effect, Exit, Layer, Ref, Scope, TestClock } from "effect"
import { Scheduler, schedulePollInterval } from "../../src/runtime/Scheduler.js"
import type { SqlClient } from "@effect/sql"
import type { DatabaseError } from "../../src/storage/Database.js"
import { Followups, type WorkOrigin } from "../../src/tools/Followups.js"
import { draftSchedule } from "../../src/tools/schedules/newSchedule.js"
import type { ScheduleRequest } from "../../src/tools/schedules/newSchedule.js"
import { ScheduleStore } from "../../src/tools/schedules/ScheduleStore.js"
import { databases, reopenable } from "../support/databases.js"
import { Either } from "effect"

// The Scheduler under the TestClock, over a real kern.db (SQLite and PostgreSQL): due times, cron in a zone, misfires across downtime.
// Followups is recorded here (exactly once per key, like the real one, which test/runtime/followups.test.ts covers).

const minute = 60_000
const hour = 60 * minute
const at = (h: number, m = 0) => Date.UTC(2026, 0, 2, h, m)
const operator: WorkOrigin = { interface: "cli", channel: "terminal", userId: "operator" }

interface Post {
  readonly key: string
  readonly origin: WorkOrigin
  readonly text: string
}

const recordingFollowups = (posts: Ref.Ref<ReadonlyArray<Post>>) =>
  Layer.succeed(Followups, {
    post: (key, origin, text) =>
      Ref.modify(posts, (all) => all.some((p) => p.key === key) ? [false, all] : [true, [...all, { key, origin, text }]]),
    posted: (key) => Effect.map(Ref.get(posts), (all) => all.some((p) => p.key === key))
  })

/** The scheduler serving in a scope of its own, over kern.db `db`; `stop` is the agent going down. */
const serving = (db: Layer.Layer<SqlClient.SqlClient, DatabaseError>, posts: Ref.Ref<ReadonlyArray<Post>>, poll: Duration.DurationInput = schedulePollInterval) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const layer = Scheduler.layerPolling(poll).pipe(
      Layer.provideMerge(ScheduleStore.Default),
      Layer.provide(recordingFollowups(posts)),
      Layer.provideMerge(db)
    )
    const context = yield* Layer.buildWithScope(layer, scope)
    yield* Effect.forkIn(Context.get(context, Scheduler).run, scope)
    return { store: Context.get(context, ScheduleStore), stop: Scope.close(scope, Exit.void) }
  })

const add = (store: ScheduleStore, request: ScheduleRequest, origin: WorkOrigin = operator) =>
  Effect.gen(function*() {
    const draft = draftSchedule(request, yield* Effect.clockWith((c) => c.currentTimeMillis), "UTC")
    if (Either.isLeft(draft)) return yield* Effect.die(draft.left)
    return yield* store.add(draft.right, { origin, deliverTo: null, createdBy: "operator" })
  })

const waitPosts = (posts: Ref.Ref<ReadonlyArray<Post>>, n: number) =>
  Effect.gen(function*() {
    while ((yield* Ref.get(posts)).length < n) yield* Effect.yieldNow()
    return yield* Ref.get(posts)
  })

/** Waits until the scheduler sleeps until a due time (on the TestClock). */
const asleep = Effect.gen(function*() {
  while ((yield* TestClock.sleeps()).length === 0) yield* Effect.yieldNow()
})

/** Lets the scheduler's fiber run to its next sleep. */
const settle = Effect.gen(function*() {
  for (let i = 0; i < 50; i++) yield* Effect.yieldNow()
})

describe.each(databases)("scheduler on $dialect", (database) => {
  it.scoped("a one-shot fires once at its due time, in the conversation that added it, and is done", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at(9))
      const posts = yield* Ref.make<ReadonlyArray<Post>>([])
      const { store } = yield* serving(yield* reopenable(database), posts)
      const friend = { interface: "telegram", channel: "42", userId: "42" }
      const row = yield* add(store, { at: "in 2 hours", prompt: "call the dentist" }, friend)
      yield* asleep
      yield* TestClock.adjust(2 * hour - 1)
      yield* settle
      expect(yield* Ref.get(posts)).toEqual([])
      yield* TestClock.adjust(1)
      const [post] = yield* waitPosts(posts, 1)
      expect(post).toEqual({
        key: `schedule:${row.id}:2026-01-02T11:00:00.000Z`,
        origin: friend,
        text: `[schedule ${row.id}, due 2026-01-02T11:00:00+00:00] call the dentist`
      })
      while ((yield* store.list)[0]!.nextDueMs !== null) yield* Effect.yieldNow()
      expect((yield* store.list)[0]).toMatchObject({ fired: 1, missed: 0, lastFiredMs: at(11) })
      yield* TestClock.adjust(24 * hour)
      yield* settle
      expect((yield* Ref.get(posts)).length).toBe(1)
    }))

  it.scoped("a cron fires at each slot in its own zone", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at(6))
      const posts = yield* Ref.make<ReadonlyArray<Post>>([])
      const { store } = yield* serving(yield* reopenable(database), posts)
      // 09:00 in Berlin is 08:00 UTC in January; in New York 14:00 UTC.
      yield* add(store, { cron: "0 9 * * *", timezone: "Europe/Berlin", prompt: "berlin" })
      yield* add(store, { cron: "0 9 * * *", timezone: "America/New_York", prompt: "new york" })
      yield* asleep
      yield* TestClock.adjust(2 * hour)
      expect((yield* waitPosts(posts, 1)).map((p) => p.key)).toEqual(["schedule:1:2026-01-02T08:00:00.000Z"])
      expect((yield* Ref.get(posts))[0]!.text).toBe("[schedule 1, due 2026-01-02T09:00:00+01:00] berlin")
      yield* TestClock.adjust(6 * hour)
      expect((yield* waitPosts(posts, 2))[1]!.key).toBe("schedule:2:2026-01-02T14:00:00.000Z")
      yield* TestClock.adjust(18 * hour)
      expect((yield* waitPosts(posts, 3))[2]!.key).toBe("schedule:1:2026-01-03T08:00:00.000Z")
    }))

  it.scoped("down across 3 cron slots: skip records them missed, once fires one late, all fires each; the next slot fires as usual", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at(9, 30))
      const file = yield* reopenable(database)
      const posts = yield* Ref.make<ReadonlyArray<Post>>([])
      const first = yield* serving(file, posts)
      const skip = yield* add(first.store, { cron: "0 * * * *", prompt: "skip", misfire: "skip" })
      const once = yield* add(first.store, { cron: "0 * * * *", prompt: "once", misfire: "once" })
      const all = yield* add(first.store, { cron: "0 * * * *", prompt: "all", misfire: "all" })
      yield* first.stop

      // Down from 09:30 to 12:10: the runs at 10, 11 and 12 came due meanwhile.
      yield* TestClock.adjust(2 * hour + 40 * minute)
      const second = yield* serving(file, posts)
      const fired = yield* waitPosts(posts, 4)
      expect(fired.map((p) => p.key).sort()).toEqual([
        `schedule:${once.id}:2026-01-02T12:00:00.000Z`,
        `schedule:${all.id}:2026-01-02T10:00:00.000Z`,
        `schedule:${all.id}:2026-01-02T11:00:00.000Z`,
        `schedule:${all.id}:2026-01-02T12:00:00.000Z`
      ].sort())
      expect(fired.find((p) => p.key.startsWith(`schedule:${once.id}:`))!.text).toBe(
        `[schedule ${once.id}, due 2026-01-02T12:00:00+00:00; late: the agent was down when it was due; 2 earlier runs missed while the agent was down] once`
      )
      const listed = yield* second.store.list
      while ((yield* second.store.list).some((s) => s.nextDueMs !== at(13))) yield* Effect.yieldNow()
      expect((yield* second.store.list).map((s) => [s.id, s.fired, s.missed])).toEqual([[skip.id, 0, 3], [once.id, 1, 2], [all.id, 3, 0]])
      expect(listed.length).toBe(3)
      expect(yield* second.store.summary).toMatchObject({ schedules: 3, active: 3, missed: 5, lastMissedMs: at(12) })

      // Back on time: 13:00 fires once for each.
      yield* TestClock.adjust(50 * minute)
      const after = yield* waitPosts(posts, 7)
      expect(after.slice(4).map((p) => p.key).sort()).toEqual(
        [skip.id, once.id, all.id].map((id) => `schedule:${id}:2026-01-02T13:00:00.000Z`).sort()
      )
    }))

  it.scoped("a run already posted before the agent died is recorded, not posted again", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at(9, 30))
      const file = yield* reopenable(database)
      const posts = yield* Ref.make<ReadonlyArray<Post>>([])
      const first = yield* serving(file, posts)
      const row = yield* add(first.store, { at: "2026-01-02T10:00", prompt: "once only" })
      yield* first.stop
      // As if the last process posted the run and died before recording it.
      yield* Ref.set(posts, [{ key: `schedule:${row.id}:2026-01-02T10:00:00.000Z`, origin: operator, text: "posted" }])
      yield* TestClock.adjust(31 * minute)
      const second = yield* serving(file, posts)
      while ((yield* second.store.list)[0]!.nextDueMs !== null) yield* Effect.yieldNow()
      expect((yield* Ref.get(posts)).length).toBe(1)
      expect((yield* second.store.list)[0]).toMatchObject({ fired: 1, missed: 0 })
    }))

  it.scoped("a schedule another process adds (the CLI) is seen at the next poll; a removed one never fires", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at(9))
      const file = yield* reopenable(database)
      const posts = yield* Ref.make<ReadonlyArray<Post>>([])
      // The poll is on the real clock: a short one here.
      yield* serving(file, posts, "200 millis")
      // Another connection to kern.db, as `kern schedule add` beside the running agent.
      const other = Context.get(yield* Layer.build(ScheduleStore.Default.pipe(Layer.provide(file))), ScheduleStore)
      yield* add(other, { at: "in 1 minute", prompt: "from the cli" })
      // Nothing told this process: it is seen at the poll, and the scheduler sleeps until it is due.
      yield* asleep
      yield* TestClock.adjust(minute)
      expect((yield* waitPosts(posts, 1))[0]!.text).toContain("from the cli")
      const gone = yield* add(other, { at: "in 2 minutes", prompt: "removed" })
      yield* asleep
      expect(yield* other.remove(gone.id)).toBe(true)
      yield* TestClock.adjust(10 * minute)
      yield* settle
      expect((yield* Ref.get(posts)).length).toBe(1)
    }))
})
