import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * sqlite-vec loaded into kern.db's connection: what recall's binary prefilter (the vec0 table `recall_vec`) and its
 * `vec_` functions need, and nothing else in kern.db. Loaded by what touches them (src/recall/RecallStoreSqlite.ts),
 * before any transaction (the client's own call waits for the connection a transaction holds), and by a migration
 * run; not when kern.db opens: that was 3–7 ms of every command and first open that never searches by vector. Its
 * package is imported here too, so a process that never loads it (`kern status` of a stopped agent) never reads it.
 * SQLite reads, writes, checks and vacuums every other table without it; a statement on `recall_vec` without it fails
 * with "no such module: vec0". Loading it again does no harm.
 */
export const loadVectorExtension = (client: SqliteClient.SqliteClient): Effect.Effect<void, SqlError> =>
  Effect.tryPromise({
    try: () => import("sqlite-vec"),
    catch: (cause) => new SqlError({ cause, message: "Failed to import sqlite-vec" })
  }).pipe(Effect.flatMap((sqliteVec) => client.loadExtension(sqliteVec.getLoadablePath())))
