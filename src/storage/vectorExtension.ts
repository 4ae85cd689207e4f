import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Effect } from "effect"
import * as sqliteVec from "sqlite-vec"

/**
 * sqlite-vec loaded into kern.db's connection: what recall's binary prefilter (the vec0 table `recall_vec`) and its
 * `vec_` functions need, and nothing else in kern.db. Loaded by what touches them (src/recall/RecallStoreSqlite.ts),
 * before any transaction (the client's own call waits for the connection a transaction holds), and by a migration
 * run; not when kern.db opens: that was 3–7 ms of every command and first open that never searches by vector.
 * SQLite reads, writes, checks and vacuums every other table without it; a statement on `recall_vec` without it fails
 * with "no such module: vec0". Loading it again does no harm.
 */
export const loadVectorExtension = (client: SqliteClient.SqliteClient): Effect.Effect<void, SqlError> =>
  client.loadExtension(sqliteVec.getLoadablePath())
