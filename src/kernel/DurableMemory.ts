import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import type { MemoryTier } from "./MemoryBundle.js"
import { entryId, isExpired, type MemoryEntry, MemoryError, validateValue } from "./MemoryEntry.js"

/** The durable tier: long-lived facts in kern.db's `durable_memory`, expiring by TTL on the Clock. */
export class DurableMemory extends Context.Tag("kern/kernel/DurableMemory")<DurableMemory, MemoryTier>() {}

const Row = Schema.Struct({
  key: Schema.String,
  value: Schema.parseJson(),
  source: Schema.String,
  confidence: Schema.Number,
  createdAtMs: Schema.Number,
  ttlS: Schema.NullOr(Schema.Number)
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export const layerSql: Layer.Layer<DurableMemory, never, SqlClient.SqlClient> = Layer.effect(
  DurableMemory,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fail = (key: string) => (error: { readonly message: string }) =>
      new MemoryError({ tier: "durable", key, message: `durable memory "${key}": ${error.message}` })

    const getEntry = (key: string) =>
      Effect.gen(function*() {
        const rows = yield* decodeRows(yield* sql`SELECT * FROM durable_memory WHERE key = ${key}`)
        const row = rows[0]
        if (row === undefined) return Option.none<MemoryEntry>()
        if (isExpired(row, yield* Clock.currentTimeMillis)) {
          yield* sql`DELETE FROM durable_memory WHERE key = ${key}`
          return Option.none<MemoryEntry>()
        }
        return Option.some<MemoryEntry>({ ...row, tier: "durable", entryId: entryId("durable", key) })
      }).pipe(Effect.mapError(fail(key)), Effect.withSpan("kern.memory.durable.get"))

    const purgeExpired = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql`DELETE FROM durable_memory WHERE ttl_s IS NOT NULL AND created_at_ms + ttl_s * 1000 <= ${now}`)

    return DurableMemory.of({
      tier: "durable",
      put: (key, value, options = {}) =>
        Effect.gen(function*() {
          yield* validateValue("durable", key, value)
          const now = yield* Clock.currentTimeMillis
          yield* sql`INSERT INTO durable_memory ${
            sql.insert({
              key,
              value: JSON.stringify(value),
              source: options.source ?? "",
              confidence: options.confidence ?? 1,
              createdAtMs: now,
              ttlS: options.ttlS ?? null
            })
          } ON CONFLICT (key) DO UPDATE SET value = excluded.value, source = excluded.source,
            confidence = excluded.confidence, created_at_ms = excluded.created_at_ms, ttl_s = excluded.ttl_s`.pipe(
            Effect.mapError(fail(key))
          )
        }).pipe(Effect.withSpan("kern.memory.durable.put")),
      get: (key) => Effect.map(getEntry(key), Option.map((entry) => entry.value)),
      getEntry,
      delete: (key) =>
        Effect.gen(function*() {
          yield* purgeExpired
          const rows = yield* sql`DELETE FROM durable_memory WHERE key = ${key} RETURNING key`
          return rows.length > 0
        }).pipe(Effect.mapError(fail(key))),
      listKeys: Effect.gen(function*() {
        yield* purgeExpired
        const rows = yield* sql<{ key: string }>`SELECT key FROM durable_memory ORDER BY key`
        return rows.map((row) => row.key)
      }).pipe(Effect.mapError(fail("*")))
    })
  })
)
