import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Layer, TestClock } from "effect"
import { AgentConfig } from "../../src/config/AgentConfig.js"
import * as RetentionJob from "../../src/runtime/RetentionJob.js"
import { loadedAt, makeAgentDir } from "../recall/harness.js"
import { databases } from "../support/databases.js"
import { eventuallyEffect } from "../support/waitFor.js"

const minute = 60_000
const day = 86_400_000
const t0 = Date.UTC(2026, 5, 1)

const count = (query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(query)).pipe(Effect.map((rows) => rows[0]?.n ?? 0), Effect.orDie)

const seedOldEvents = (n: number, atMs: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO kernel_events (ts_ms, decision_key, run_id, trace_id, status)
       WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < ${n})
       SELECT CAST(${atMs} AS BIGINT) + value, 'kernel.tool.call', 'run', 'trace', 'ok' FROM n`).pipe(Effect.orDie)

/** The job's pending wake-ups (TestClock's sleeps): when it will next run. */
const nextWake = Effect.map(TestClock.sleeps(), (sleeps) => Chunk.toReadonlyArray(sleeps))

/** Waits (a condition, in real time) until the job's one pending wake-up is at `atMs`. */
const asleepUntil = (atMs: number) =>
  eventuallyEffect(Effect.map(nextWake, (wakes) => wakes.length === 1 && wakes[0] === atMs))

describe.each(databases)("RetentionJob, kern.db on $dialect", (database) => {
  it.scoped("runs once the start delay is past, then a day after its last run; each run prunes what is due", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      const loaded = loadedAt(dir, { retention: { events: { maxAgeDays: 30 } } })
      const below = database.layer.pipe(
        Layer.provideMerge(Layer.succeed(AgentConfig, loaded)),
        Layer.provideMerge(NodeContext.layer),
        Layer.orDie
      )
      const context = yield* Layer.build(below)
      yield* Effect.gen(function*() {
        yield* TestClock.setTime(t0)
        yield* seedOldEvents(100, t0 - 60 * day)
        yield* Layer.build(RetentionJob.layer)
        // Asleep until the start delay is past; nothing pruned yet.
        assert.isTrue(yield* asleepUntil(t0 + 10 * minute))
        assert.strictEqual(yield* count("SELECT count(*) AS n FROM kernel_events"), 100)

        yield* TestClock.adjust(10 * minute)
        assert.isTrue(yield* eventuallyEffect(Effect.map(count("SELECT count(*) AS n FROM retention_state"), (n) => n === 1)))
        assert.strictEqual(yield* count("SELECT count(*) AS n FROM kernel_events"), 0)
        assert.strictEqual(yield* count("SELECT last_run_at_ms AS n FROM retention_state"), t0 + 10 * minute)
        // Next due a day after that run.
        assert.isTrue(yield* asleepUntil(t0 + 10 * minute + day))

        yield* seedOldEvents(50, t0 - 60 * day)
        yield* TestClock.adjust(day)
        assert.isTrue(yield* eventuallyEffect(
          Effect.map(count("SELECT last_run_at_ms AS n FROM retention_state"), (n) => n === t0 + 10 * minute + day)
        ))
        assert.strictEqual(yield* count("SELECT count(*) AS n FROM kernel_events"), 0)
      }).pipe(Effect.provide(context))
    }))

  it.scoped("after a restart it is due a day after the last run kern.db records, not at once", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      const loaded = loadedAt(dir)
      const below = database.layer.pipe(
        Layer.provideMerge(Layer.succeed(AgentConfig, loaded)),
        Layer.provideMerge(NodeContext.layer),
        Layer.orDie
      )
      const context = yield* Layer.build(below)
      yield* Effect.gen(function*() {
        yield* TestClock.setTime(t0)
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO retention_state (id, last_run_at_ms, report) VALUES (1, ${t0 - 2 * 3_600_000}, '{}')`.pipe(Effect.orDie)
        yield* Layer.build(RetentionJob.layer)
        assert.isTrue(yield* asleepUntil(t0 - 2 * 3_600_000 + day))
      }).pipe(Effect.provide(context))
    }))
})
