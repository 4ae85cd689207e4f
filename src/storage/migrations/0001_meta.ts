import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** A key/value table for facts about the database itself (schema owner, creation time). */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS kern_meta (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
  )`
})
