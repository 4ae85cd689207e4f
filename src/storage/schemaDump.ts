import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The statements that make a database's schema, in the order SQLite created the objects: tables, indexes, views,
 * triggers and virtual tables, without SQLite's own tables (`sqlite_*`), the shadow tables a virtual table makes
 * for itself and the indexes SQLite makes for constraints (no `sql`). Run in this order on an empty database, they
 * make the same schema.
 */
export const schemaStatements = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const shadows = yield* sql<{ readonly name: string }>`SELECT name FROM pragma_table_list WHERE type = 'shadow'`
  const shadow = new Set(shadows.map((row) => row.name))
  const rows = yield* sql<{ readonly name: string; readonly tblName: string; readonly sql: string }>`
    SELECT name, tbl_name, sql FROM sqlite_master
    WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
    ORDER BY rowid`
  return rows.filter((row) => !shadow.has(row.name) && !shadow.has(row.tblName)).map((row) => row.sql)
})
