import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Option, TestClock } from "effect"
import { WakeSources } from "../../../src/host/wakeSources/wakeSources.js"
import { operatorOrigin } from "../../../src/tools/Followups.js"
import { ScheduleStore } from "../../../src/tools/schedules/ScheduleStore.js"
import { agentDatabaseConfig, agentSql, postgres } from "../../support/databases.js"
import { testAgentDir } from "../../support/testAgentDir.js"
import { eventuallyEffect } from "../../support/waitFor.js"
import { oneShot, wakeSourcesOver } from "./seed.js"
import { makeTestHost } from "./testHost.js"

const minute = 60_000

// A passive agent whose kern.db is on PostgreSQL: a schedule another process adds there (`kern schedule add` on another
// machine) changes no file in its folder, so the host reads it again every serverRecheckLooks looks; the looks here are
// 20 ms apart instead of 10 s.
describe("a passive agent on PostgreSQL", () => {
  it.scoped("a schedule written into its schema while it sleeps shows as its due time at a later look, then wakes it when due", () =>
    Effect.gen(function*() {
      const dir = testAgentDir(yield* agentDatabaseConfig(postgres))
      const host = yield* makeTestHost([{ name: "remote", dir }], () => Layer.empty)
      const sources = Context.get(yield* Layer.build(wakeSourcesOver(host.layer, {}, { recheckInterval: Duration.millis(20) })), WakeSources)
      expect(yield* eventuallyEffect(Effect.map(sources.status, (s) => s.passive === 1))).toBe(true)
      expect((yield* sources.status).due).toBe(0)

      // Written straight into its schema, as a process on another machine writes it: nothing in the folder changes.
      yield* Effect.flatMap(ScheduleStore, (store) =>
        store.add(oneShot(5 * minute, "from elsewhere"), { origin: operatorOrigin, deliverTo: null, createdBy: "operator" })).pipe(
          Effect.provide(ScheduleStore.Default.pipe(Layer.provide(agentSql(dir))))
        )
      const due = Effect.map(sources.status, (s) => s.due === 1 && Option.getOrNull(s.nextDueMs) === 5 * minute)
      expect(yield* eventuallyEffect(due)).toBe(true)
      expect(yield* host.woken).toEqual([])

      yield* TestClock.adjust(5 * minute - 1)
      expect(yield* host.woken).toEqual([])
      yield* TestClock.adjust(1)
      expect(yield* eventuallyEffect(Effect.map(host.woken, (w) => w.length === 1))).toBe(true)
      expect(yield* host.woken).toEqual([{ name: "remote", reason: "a schedule is due" }])
      expect(yield* host.stateOf("remote")).toBe("live")
    }), { timeout: 120_000 })
})
