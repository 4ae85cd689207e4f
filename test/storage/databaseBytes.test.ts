import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { databaseBytes } from "../../src/storage/databaseBytes.js"
import { postgresLayer } from "../support/databases.js"
import { makeTempDir } from "../support/tempDir.js"

// GET /status's dbBytes: kern.db's file and WAL on SQLite, the agent's schema on PostgreSQL (where there is no file:
// the file's size read 0 for every agent there).

const onFile = () => {
  const dbFile = NodePath.join(makeTempDir("kern-db-"), "kern.db")
  return { dialect: "sqlite", dbFile, layer: Database.layer({ filename: dbFile }) } as const
}
const onServer = () => ({ dialect: "postgres", dbFile: NodePath.join(makeTempDir("kern-db-"), "kern.db"), layer: postgresLayer } as const)

describe.each([{ make: onFile, name: "sqlite" }, { make: onServer, name: "postgres" }])("kern.db's size on $name", ({ make }) => {
  const database = make()
  it.live("counts what the database holds, and grows with it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const before = yield* databaseBytes(database.dbFile)
      expect(before).toBeGreaterThan(0)
      const secret = "x".repeat(200)
      for (let batch = 0; batch < 20; batch++) {
        const rows = Array.from({ length: 100 }, (_, i) => ({ secret_hash: `${secret}-${batch}-${i}`, created_at_ms: i, last_seen_at_ms: i }))
        yield* sql`INSERT INTO browser_sessions ${sql.insert(rows)}`
      }
      const after = yield* databaseBytes(database.dbFile)
      expect(after).toBeGreaterThan(before + 200 * 1000)
    }).pipe(Effect.provide(Layer.merge(database.layer, NodeContext.layer))))

})
