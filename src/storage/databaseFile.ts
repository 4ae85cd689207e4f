import type { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"

const DatabaseList = Schema.Array(Schema.Struct({ name: Schema.String, file: Schema.String }))

/**
 * The file of the connection's main database (`PRAGMA database_list`): none for an in-memory one, on PostgreSQL, or
 * when SQLite does not say. What lives beside kern.db (the audit journals, a change counter's connection) is found from
 * it, so the layers that keep such things need nothing but the SqlClient.
 */
export const databaseFile = (sql: SqlClient.SqlClient): Effect.Effect<Option.Option<string>> =>
  sql.onDialectOrElse({
    // PostgreSQL has no file of its own, and a PRAGMA would only show in the server's log as a failed statement.
    pg: () => Effect.succeedNone,
    orElse: () =>
      sql`PRAGMA database_list`.pipe(
        Effect.flatMap(Schema.decodeUnknown(DatabaseList)),
        Effect.map((rows) => Option.fromNullable(rows.find((row) => row.name === "main")?.file).pipe(Option.filter((file) => file !== ""))),
        Effect.orElseSucceed(() => Option.none<string>())
      )
  })
