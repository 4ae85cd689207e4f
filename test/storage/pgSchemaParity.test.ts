import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import * as Database from "../../src/storage/Database.js"
import { tableColumns } from "../../src/storage/tableColumns.js"
import { postgresLayer } from "../support/databases.js"

// Every table and column kern's SQLite migrations leave is in kern's PostgreSQL migrations too (a new SQLite column
// without its PostgreSQL twin is a repository that fails on PostgreSQL only).

const columnsOf = (layer: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, tableColumns).pipe(Effect.provide(layer))

/** Tables of one database only: the migrators' own bookkeeping. */
const bookkeeping = new Set(["effect_sql_migrations", "kern_migrations"])

describe("kern.db's schema on PostgreSQL", () => {
  it.live("has every table and column SQLite's has", () =>
    Effect.gen(function*() {
      const sqlite = yield* columnsOf(Database.layerMemory)
      const pg = yield* columnsOf(postgresLayer)
      // The comparison sees what it compares: SQLite's tables, a column added by a later migration among them.
      expect(sqlite.get("media")).toContain("pruned_at_ms")
      expect(sqlite.size).toBeGreaterThan(25)
      const missing: Array<string> = []
      for (const [table, columns] of sqlite) {
        if (bookkeeping.has(table) || table.startsWith("recall_")) continue
        const there = pg.get(table)
        if (there === undefined) missing.push(table)
        else for (const column of columns) if (!there.includes(column)) missing.push(`${table}.${column}`)
      }
      expect(missing).toEqual([])
    }))
})
