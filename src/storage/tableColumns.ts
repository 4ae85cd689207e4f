import { type SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

const ColumnRow = Schema.Struct({ tableName: Schema.String, columnName: Schema.String })

/**
 * The ordinary tables of kern.db (SQLite's file, or the agent's schema on PostgreSQL) with their columns in order,
 * by name. SQLite's virtual tables (recall's FTS5 and vec0) and their shadow tables are left out: their rows are
 * rebuilt from what they index, never copied.
 */
export const tableColumns = (sql: SqlClient.SqlClient): Effect.Effect<ReadonlyMap<string, ReadonlyArray<string>>, unknown> =>
  SqlSchema.findAll({
    Request: Schema.Void,
    Result: ColumnRow,
    execute: () =>
      sql.onDialectOrElse({
        pg: () =>
          sql`SELECT c.table_name, c.column_name FROM information_schema.columns c
            JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
            ORDER BY c.table_name, c.ordinal_position`,
        orElse: () =>
          sql`SELECT m.name AS table_name, p.name AS column_name FROM sqlite_master m, pragma_table_info(m.name) p
            WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.sql NOT LIKE 'CREATE VIRTUAL TABLE%'
              AND NOT EXISTS (SELECT 1 FROM sqlite_master v WHERE v.type = 'table' AND v.sql LIKE 'CREATE VIRTUAL TABLE%'
                AND m.name LIKE v.name || '\\_%' ESCAPE '\\')
            ORDER BY m.name, p.cid`
      })
  })(undefined).pipe(
    Effect.map((rows) => {
      const tables = new Map<string, Array<string>>()
      for (const row of rows) {
        const columns = tables.get(row.tableName) ?? []
        columns.push(row.columnName)
        tables.set(row.tableName, columns)
      }
      return tables
    }),
    Effect.withSpan("kern.storage.tableColumns")
  )
