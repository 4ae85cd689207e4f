import { SqlRunnerStorage } from "@effect/cluster"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { buildHoldingMigrationLock } from "../../src/storage/pg/migrationLock.js"
import { startPostgres } from "../support/postgres.js"

// @effect/cluster's runner storage makes its tables as it builds (CREATE TABLE IF NOT EXISTS, no lock of its own). Two
// runners starting together on a new database raced in PostgreSQL's catalog (CI: "duplicate key value violates unique
// constraint pg_type_typname_nsp_index") and one died. MultiRunner builds it under buildHoldingMigrationLock.

const starts = 6
const rounds = 4

describe("a library layer built holding the migration lock", () => {
  it.scopedLive("runners starting together on new databases all build the runner storage, and the lock is let go", () =>
    Effect.gen(function*() {
      const pg = yield* startPostgres
      const admin = yield* Layer.build(PgClient.layer({ url: pg.url, maxConnections: 1 }))
      const sql = yield* Effect.provide(SqlClient.SqlClient, admin)
      const config = ShardingConfig.layer({})
      for (let round = 0; round < rounds; round++) {
        const database = `runners_${round}`
        yield* sql.unsafe(`CREATE DATABASE ${database}`)
        const url = Redacted.make(Redacted.value(pg.url).replace(/\/postgres$/, `/${database}`))
        // Each start its own client (its own connections), as runner processes have.
        const start = Effect.scoped(Layer.build(
          buildHoldingMigrationLock("cluster_runner_storage")(SqlRunnerStorage.layer).pipe(
            Layer.provide(config),
            Layer.provide(PgClient.layer({ url, maxConnections: 4 }))
          )
        ))
        const results = yield* Effect.all(Array.from({ length: starts }, () => Effect.either(start)), { concurrency: "unbounded" })
        expect(results.filter((result) => result._tag === "Left").map((result) => String(result.left)), database).toEqual([])
        const check = Effect.gen(function*() {
          const db = yield* SqlClient.SqlClient
          const tables = yield* db<{ tablename: string }>`SELECT tablename FROM pg_tables WHERE tablename LIKE 'cluster_%' ORDER BY tablename`
          return tables.map((row) => row.tablename)
        }).pipe(Effect.provide(PgClient.layer({ url, maxConnections: 1 })))
        expect(yield* check, database).toEqual(["cluster_runners"])
      }
      // Every start let the lock go: none is held on the server.
      const held = yield* sql<{ count: string }>`SELECT count(*) AS count FROM pg_locks WHERE locktype = 'advisory'`
      expect(Number(held[0]!.count)).toBe(0)
    }), 120_000)
})
