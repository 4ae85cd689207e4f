import { SqlError, type SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

/**
 * `sql.withTransaction` whose failing COMMIT (or ROLLBACK) is a typed SqlError instead of a defect. @effect/sql dies
 * when COMMIT fails, and a full disk shows exactly there (SQLITE_FULL: the statements fit in memory, the commit
 * writes them): the defect went past every typed handler, so HTTP answered a bare 500 and the Telegram and Slack
 * loops died until a restart. Every kern.db transaction goes through here.
 */
export const transaction = (sql: SqlClient.SqlClient) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  sql.withTransaction(effect).pipe(
    Effect.catchSomeDefect((defect) => defect instanceof SqlError.SqlError ? Option.some(Effect.fail(defect)) : Option.none())
  )
