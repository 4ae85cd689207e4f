import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Session counts moved out of kern.db into a record per session in .kern/session-counts/ (src/session/SessionIndex.ts). */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP TABLE IF EXISTS sessions`)
