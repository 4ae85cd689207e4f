import type { SqlClient, Statement } from "@effect/sql"

/**
 * The few SQL expressions kern.db's repositories write that SQLite and PostgreSQL spell apart. Everything else they
 * write is SQL both take (ON CONFLICT, RETURNING, a table-qualified column in an upsert's SET).
 */
export type Dialect = "sqlite" | "pg"

export const dialectOf = (sql: SqlClient.SqlClient): Dialect => sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })

/** A JSON text column's value at `path` (`["usage", "inputTokens"]`), as text. */
export const jsonText = (dialect: Dialect, column: string, path: ReadonlyArray<string>): string =>
  dialect === "pg" ? `(${column}::jsonb #>> '{${path.join(",")}}')` : `json_extract(${column}, '$.${path.join(".")}')`

/** A JSON text column's value at `path`, as a number. */
export const jsonNumber = (dialect: Dialect, column: string, path: ReadonlyArray<string>): string =>
  dialect === "pg" ? `(${column}::jsonb #>> '{${path.join(",")}}')::double precision` : `json_extract(${column}, '$.${path.join(".")}')`

/**
 * A JSON object of SQL values (`[["toolCalls", sql\`… + ${n}\`]]`), as JSON text: PostgreSQL's json_build_object cast
 * to text, SQLite's json_object. The keys are kern's own names, never input.
 */
export const jsonObject = (
  sql: SqlClient.SqlClient,
  fields: ReadonlyArray<readonly [string, Statement.Fragment]>
): Statement.Fragment => {
  const pairs = sql.csv(fields.map(([key, value]) => sql`${sql.literal(`'${key}'`)}, ${value}`))
  return dialectOf(sql) === "pg" ? sql`json_build_object(${pairs})::text` : sql`json_object(${pairs})`
}
