import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import * as DurableMemory from "../../src/kernel/DurableMemory.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import { makeMemoryBundle } from "../../src/kernel/MemoryBundle.js"
import type { SqlClient } from "@effect/sql"
import type { DatabaseError } from "../../src/storage/Database.js"
import { databases, reopenable } from "../support/databases.js"

const tiersOver = (db: Layer.Layer<SqlClient.SqlClient, DatabaseError>) =>
  Layer.mergeAll(DurableMemory.layerSql, EventLog.layerSql.pipe(Layer.provide(KnownSecrets.layerNone))).pipe(Layer.provideMerge(db))

const bundle = makeMemoryBundle({ traceId: "t".repeat(32), sessionId: "s1", runId: "run_1" })

describe.each(databases)("MemoryBundle on $dialect", (database) => {
  const memoryLayer = () => tiersOver(database.layer)

  it.effect("working memory: put, get, delete (true only if it existed), listKeys, snapshot", () =>
    Effect.gen(function*() {
      const { working } = yield* bundle
      yield* working.put("last_result", { items: [1, 2] })
      yield* working.put("flag", true, { source: "test" })
      assert.deepStrictEqual(Option.getOrNull(yield* working.get("last_result")), { items: [1, 2] })
      assert.deepStrictEqual(yield* working.listKeys, ["flag", "last_result"])
      assert.deepStrictEqual(yield* working.snapshot, { last_result: { items: [1, 2] }, flag: true })
      const entry = Option.getOrThrow(yield* working.getEntry("flag"))
      assert.strictEqual(entry.entryId, "mem_wor_flag")
      assert.strictEqual(entry.source, "test")
      assert.strictEqual(entry.confidence, 1)
      assert.isTrue(yield* working.delete("flag"))
      assert.isFalse(yield* working.delete("flag"))
      assert.isTrue(Option.isNone(yield* working.get("flag")))
    }).pipe(Effect.provide(memoryLayer())))

  it.effect("episodic writes are audited in the EventLog under kernel.memory.put", () =>
    Effect.gen(function*() {
      const { episodic } = yield* bundle
      yield* episodic.put("step_1_output", { ok: true }, { source: "tool.vault_read" })
      assert.deepStrictEqual(yield* episodic.snapshot, { step_1_output: { ok: true } })
      const events = yield* Effect.flatMap(EventLog.EventLog, (log) => log.byRun("run_1"))
      assert.strictEqual(events.length, 1)
      assert.strictEqual(events[0]?.decisionKey, "kernel.memory.put")
      assert.deepStrictEqual(JSON.parse(events[0]?.detail ?? "{}"), {
        tier: "episodic",
        key: "step_1_output",
        source: "tool.vault_read",
        entryId: "mem_epi_step_1_output"
      })
    }).pipe(Effect.provide(memoryLayer())))

  it.effect("values that are not JSON are refused with what is wrong", () =>
    Effect.gen(function*() {
      const { durable, working } = yield* bundle
      const cyclic: Record<string, unknown> = {}
      cyclic["self"] = cyclic
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [() => 1, "a function"],
        [undefined, "undefined"],
        [{ a: [1, Number.NaN] }, "value.a[1] is NaN"],
        [10n, "a bigint"],
        [new Date(0), "Date"],
        [cyclic, "cycle"]
      ]
      for (const [value, problem] of cases) {
        const error = yield* Effect.flip(working.put("k", value))
        assert.strictEqual(error._tag, "MemoryError")
        assert.include(error.message, problem)
        assert.include(error.message, "\"k\"")
      }
      const durableError = yield* Effect.flip(durable.put("d", Symbol("x")))
      assert.include(durableError.message, "not JSON")
      assert.deepStrictEqual(yield* durable.listKeys, [])
    }).pipe(Effect.provide(memoryLayer())))

  it.effect("durable TTL expires on the Clock", () =>
    Effect.gen(function*() {
      const { durable, working } = yield* bundle
      yield* durable.put("user_preference", "compact", { ttlS: 86_400 })
      yield* durable.put("forever", 1)
      yield* working.put("short", 1, { ttlS: 10 })
      yield* TestClock.adjust("86399 seconds")
      assert.deepStrictEqual(Option.getOrNull(yield* durable.get("user_preference")), "compact")
      assert.isTrue(Option.isNone(yield* working.get("short")))
      yield* TestClock.adjust("1 second")
      assert.isTrue(Option.isNone(yield* durable.get("user_preference")))
      assert.deepStrictEqual(yield* durable.listKeys, ["forever"])
      assert.isFalse(yield* durable.delete("user_preference"))
    }).pipe(Effect.provide(memoryLayer())))

  it.scoped("durable values survive a fresh layer on the same kern.db", () =>
    Effect.gen(function*() {
      const db = yield* reopenable(database)
      yield* Effect.flatMap(bundle, ({ durable }) => durable.put("last_run", { items: [1, 2, 3] }, { source: "agent", confidence: 0.8 }))
        .pipe(Effect.provide(tiersOver(db)))
      const entry = yield* Effect.flatMap(bundle, ({ durable }) => durable.getEntry("last_run")).pipe(
        Effect.provide(tiersOver(db))
      )
      const value = Option.getOrThrow(entry)
      assert.deepStrictEqual(value.value, { items: [1, 2, 3] })
      assert.strictEqual(value.source, "agent")
      assert.strictEqual(value.confidence, 0.8)
      assert.strictEqual(value.entryId, "mem_dur_last_run")
    }))
})
