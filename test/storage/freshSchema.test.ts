import { SqlClient } from "@effect/sql"
import BetterSqlite3 from "better-sqlite3"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { createFreshFile } from "../../src/storage/freshFile.js"
import { freshSchemaMigrations } from "../../src/storage/freshSchema.js"
import { migrations } from "../../src/storage/migrations.js"

const tempFile = () => NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-db-")), ".kern", "kern.db")

/** Everything a schema and its rows are: every sqlite_master entry (shadow tables too) and every table's rows. */
const wholeDatabase = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const master = yield* sql.unsafe<{ type: string; name: string; tblName: string; sql: string | null }>(
    "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
  )
  const tables = yield* sql.unsafe<{ name: string; type: string; ncol: number; wr: number; strict: number }>(
    "SELECT name, type, ncol, wr, strict FROM pragma_table_list WHERE schema = 'main' ORDER BY name"
  )
  const rows: Record<string, unknown> = {}
  for (const table of tables) {
    if (table.type === "virtual" || table.name === "sqlite_schema" || table.name === "sqlite_temp_schema") continue
    // When a migration was applied differs between two databases; which ones were does not.
    const columns = table.name === "kern_migrations" ? "migration_id, name" : "*"
    rows[table.name] = yield* sql.unsafe(`SELECT ${columns} FROM "${table.name}" ORDER BY 1`)
  }
  return { master, tables, rows }
})

/** The Migrator's debug lines ("Running migration") while the layer is built. */
const migratorLines = (layer: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const logger = Logger.make(({ message }) => {
      lines.push(String(Array.isArray(message) ? message.join(" ") : message))
    })
    const database = yield* wholeDatabase.pipe(
      Effect.provide(layer),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(LogLevel.Debug)
    )
    return { database, running: lines.filter((line) => line.includes("Running migration")).length }
  })

describe("a new kern.db from the schema snapshot", () => {
  it("the snapshot is of every migration there is (after adding one: npx tsx scripts/freshSchema.ts)", () => {
    assert.deepStrictEqual(freshSchemaMigrations, Object.keys(migrations).sort())
  })

  it.effect("has the schema, rows and applied migrations of one migrated step by step, without running a migration", () =>
    Effect.gen(function*() {
      const fromSnapshot = yield* migratorLines(Database.layer({ filename: tempFile() }))
      // Given the migrations explicitly, the layer always runs them through the migrator.
      const stepByStep = yield* migratorLines(Database.layer({ filename: tempFile(), migrations }))
      assert.strictEqual(fromSnapshot.running, 0)
      assert.strictEqual(stepByStep.running, Object.keys(migrations).length)
      assert.deepStrictEqual(fromSnapshot.database, stepByStep.database)
      assert.strictEqual(
        (fromSnapshot.database.rows["kern_migrations"] as ReadonlyArray<unknown>).length,
        Object.keys(migrations).length
      )
    }))

  it.effect("a 0-byte file gets the snapshot in one call on a connection of its own; a file with anything in it is left alone", () =>
    Effect.gen(function*() {
      const file = tempFile()
      NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
      NodeFs.writeFileSync(file, "")
      assert.isTrue(createFreshFile(file))
      const size = NodeFs.statSync(file).size
      assert.isAbove(size, 0)
      // Now a database: never created again, nor touched.
      assert.isFalse(createFreshFile(file))
      assert.strictEqual(NodeFs.statSync(file).size, size)
      const opened = yield* migratorLines(Database.layer({ filename: file }))
      const stepByStep = yield* migratorLines(Database.layer({ filename: tempFile(), migrations }))
      assert.strictEqual(opened.running, 0)
      assert.deepStrictEqual(opened.database, stepByStep.database)
      // A file that is not empty is not kern's to create, whatever it holds.
      const other = tempFile()
      NodeFs.mkdirSync(NodePath.dirname(other), { recursive: true })
      NodeFs.writeFileSync(other, "not a database")
      assert.isFalse(createFreshFile(other))
      assert.strictEqual(NodeFs.readFileSync(other, "utf8"), "not a database")
    }))

  it.effect("an empty kern.db another connection is reading is not written under it", () =>
    Effect.sync(() => {
      const file = tempFile()
      NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
      NodeFs.writeFileSync(file, "")
      const reader = new BetterSqlite3(file)
      try {
        // A read transaction holds SQLite's shared lock on the file until it ends.
        reader.exec("BEGIN")
        reader.prepare("SELECT count(*) FROM sqlite_master").pluck().get()
        assert.throws(() => createFreshFile(file, 50), /locked|busy/i)
        assert.strictEqual(NodeFs.statSync(file).size, 0)
        reader.exec("COMMIT")
      } finally {
        reader.close()
      }
      assert.isTrue(createFreshFile(file, 50))
    }))

  it.effect("the same for an in-memory database", () =>
    Effect.gen(function*() {
      const fromSnapshot = yield* migratorLines(Database.layerMemory)
      const stepByStep = yield* migratorLines(Database.layer({ filename: ":memory:", migrations }))
      assert.strictEqual(fromSnapshot.running, 0)
      assert.deepStrictEqual(fromSnapshot.database, stepByStep.database)
    }))

  it.effect("a kern.db that has some migrations is migrated one by one to the same schema", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const [first] = Object.keys(migrations).sort()
      yield* Layer.build(Database.layer({ filename: file, migrations: { [first!]: migrations[first!]! } })).pipe(Effect.scoped)
      const reopened = yield* migratorLines(Database.layer({ filename: file }))
      const fresh = yield* migratorLines(Database.layer({ filename: tempFile() }))
      assert.strictEqual(reopened.running, Object.keys(migrations).length - 1)
      assert.deepStrictEqual(reopened.database, fresh.database)
    }))

  it.effect("a kern.db with a table of its own (not kern's) is not taken for a new one", () =>
    Effect.gen(function*() {
      const file = tempFile()
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE mine (x INTEGER)`).pipe(
        Effect.provide(Database.layer({ filename: file, migrations: {} }))
      )
      const opened = yield* migratorLines(Database.layer({ filename: file }))
      assert.strictEqual(opened.running, Object.keys(migrations).length)
      assert.isTrue(opened.database.master.some((entry) => entry.name === "mine"))
    }))
})
