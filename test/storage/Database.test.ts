import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { migrations } from "../../src/storage/migrations.js"
import { loadVectorExtension } from "../../src/storage/vectorExtension.js"

const tempFile = () => NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-db-")), ".kern", "kern.db")

const appliedMigrations = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ migrationId: number; name: string }>`SELECT migration_id, name FROM kern_migrations ORDER BY migration_id`
)

/** A migration that notes its name in `ran` and creates a table of that name. */
const recordingStep = (ran: Array<string>, name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.zipRight(Effect.sync(() => ran.push(name)), sql.unsafe(`CREATE TABLE t_${name} (x INTEGER)`)))

describe("Database", () => {
  it.effect("opens a file database in WAL mode with foreign keys and a busy timeout", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [journal] = yield* sql<{ journalMode: string }>`PRAGMA journal_mode`
      const [fk] = yield* sql<{ foreignKeys: number }>`PRAGMA foreign_keys`
      const [busy] = yield* sql<{ timeout: number }>`PRAGMA busy_timeout`
      assert.strictEqual(journal?.journalMode, "wal")
      assert.strictEqual(fk?.foreignKeys, 1)
      assert.strictEqual(busy?.timeout, 5000)
    }).pipe(Effect.provide(Database.layer({ filename: tempFile() }))))

  it.effect("running the migrations twice is a no-op", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const first = yield* appliedMigrations.pipe(Effect.provide(Database.layer({ filename: file })))
      const second = yield* appliedMigrations.pipe(Effect.provide(Database.layer({ filename: file })))
      assert.deepStrictEqual(first.map((row) => row.name), Object.keys(migrations).map((key) => key.replace(/^\d+_/, "")))
      assert.deepStrictEqual(second, first)
    }))

  it.effect("applies migrations in id order and records each once", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const order: Array<string> = []
      const step = (name: string) => recordingStep(order, name)
      const custom = { "0002_second": step("second"), "0001_first": step("first") }
      yield* appliedMigrations.pipe(Effect.provide(Database.layer({ filename: file, migrations: custom })))
      const rows = yield* appliedMigrations.pipe(Effect.provide(Database.layer({ filename: file, migrations: custom })))
      assert.deepStrictEqual(order, ["first", "second"])
      assert.deepStrictEqual(rows.map((row) => [row.migrationId, row.name]), [[1, "first"], [2, "second"]])
    }))

  it.effect("a database at the newest migration runs nothing again; a newer migration still runs", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const ran: Array<string> = []
      const step = (name: string) => recordingStep(ran, name)
      yield* appliedMigrations.pipe(Effect.provide(Database.layer({ filename: file, migrations: { "0001_first": step("first") } })))
      // Opened again at the newest id: nothing runs (the migrator is skipped). A record with a newer id runs only that.
      yield* appliedMigrations.pipe(Effect.provide(Database.layer({ filename: file, migrations: { "0001_first": step("first") } })))
      const rows = yield* appliedMigrations.pipe(
        Effect.provide(Database.layer({ filename: file, migrations: { "0001_first": step("first"), "0007_later": step("later") } }))
      )
      assert.deepStrictEqual(ran, ["first", "later"])
      assert.deepStrictEqual(rows.map((row) => row.migrationId), [1, 7])
    }))

  it.effect("a vec0 KNN query (sqlite-vec loaded) and an FTS5 bm25 query work on the migrated database", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* loadVectorExtension(yield* SqliteClient.SqliteClient)
      yield* sql`CREATE VIRTUAL TABLE vecs USING vec0(embedding float[4])`
      const vectors: Array<[bigint, Array<number>]> = [[1n, [1, 0, 0, 0]], [2n, [0, 1, 0, 0]], [3n, [0.9, 0.1, 0, 0]]]
      for (const [id, vector] of vectors) {
        yield* sql`INSERT INTO vecs(rowid, embedding) VALUES (${id}, ${new Float32Array(vector)})`
      }
      const knn = yield* sql<{ rowid: number; distance: number }>`
        SELECT rowid, distance FROM vecs WHERE embedding MATCH ${new Float32Array([1, 0, 0, 0])} AND k = 2 ORDER BY distance`
      assert.deepStrictEqual(knn.map((row) => Number(row.rowid)), [1, 3])

      yield* sql`CREATE VIRTUAL TABLE docs USING fts5(body)`
      yield* sql`INSERT INTO docs(body) VALUES ('the firewall rules for pfsense'), ('a note about lunch'), ('firewall firewall firewall')`
      const hits = yield* sql<{ body: string; score: number }>`
        SELECT body, bm25(docs) AS score FROM docs WHERE docs MATCH 'firewall' ORDER BY score`
      assert.strictEqual(hits.length, 2)
      assert.strictEqual(hits[0]?.body, "firewall firewall firewall")
      assert.isTrue((hits[0]?.score ?? 0) <= (hits[1]?.score ?? 0))
    }).pipe(Effect.provide(Database.layerMemory)))

  it.effect("a file that is not a database is a DatabaseError, not a crash", () =>
    Effect.gen(function*() {
      const file = tempFile()
      NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
      NodeFs.writeFileSync(file, "this is not sqlite ".repeat(100))
      const error = yield* Layer.build(Database.layer({ filename: file })).pipe(Effect.scoped, Effect.flip)
      assert.strictEqual(error._tag, "DatabaseError")
      assert.include(error.message, file)
    }))

  // A kern.db someone (a model, before .kern/ was closed to it) replaced: kern refuses it and leaves it for the operator.
  const garbage: ReadonlyArray<readonly [string, Uint8Array]> = [
    ["text", new TextEncoder().encode("the audit log is gone\n".repeat(200))],
    ["JSON", new TextEncoder().encode(JSON.stringify({ events: [] }))],
    ["random bytes", Uint8Array.from({ length: 8192 }, (_, i) => (i * 7919 + 13) % 251)],
    ["a short file", new TextEncoder().encode("x")],
    ["an SQLite header over garbage pages", Uint8Array.from([
      ...new TextEncoder().encode("SQLite format 3\u0000"),
      ...Array.from({ length: 8176 }, (_, i) => (i * 31 + 7) % 256)
    ])]
  ]
  for (const [kind, bytes] of garbage) {
    it.effect(`a kern.db holding ${kind} is a typed error and stays byte for byte as it was`, () =>
      Effect.gen(function*() {
        const file = tempFile()
        NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
        NodeFs.writeFileSync(file, bytes)
        const error = yield* Layer.build(Database.layer({ filename: file })).pipe(Effect.scoped, Effect.flip)
        assert.strictEqual(error._tag, "DatabaseError")
        assert.strictEqual(error.operation, "open")
        assert.include(error.message, file)
        assert.deepStrictEqual(new Uint8Array(NodeFs.readFileSync(file)), bytes)
        assert.deepStrictEqual(NodeFs.readdirSync(NodePath.dirname(file)), ["kern.db"])
      }))
  }

  it.effect("an empty kern.db (a new file) is set up as a fresh database", () =>
    Effect.gen(function*() {
      const file = tempFile()
      NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
      NodeFs.writeFileSync(file, "")
      const applied = yield* appliedMigrations.pipe(Effect.provide(Database.layer({ filename: file })))
      assert.strictEqual(applied.length, Object.keys(migrations).length)
    }))
})
