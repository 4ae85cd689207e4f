import { SqlClient } from "@effect/sql"
import { Context, Effect, Option, Stream } from "effect"
import { transaction } from "../storage/transaction.js"
import { tableColumns } from "../storage/tableColumns.js"

/**
 * Tables whose rows are not carried between databases: the migrators' own (each database has its own), and recall's
 * index, whose tables SQLite and PostgreSQL build differently (FTS5 and vec0, tsvector and pgvector): it is rebuilt
 * from the sessions, which the archive holds.
 */
export const notCopied = (table: string): boolean =>
  table === "kern_migrations" || table === "effect_sql_migrations" || table.startsWith("recall_")

/** Rows read and written per statement. */
const batchRows = 500

/**
 * Runs a statement on its own client's connection. @effect/sql finds a client's transaction by one context tag shared
 * by every client, so inside one client's transaction another client's statement would take that connection: each
 * side's statements are pinned to their own (`pinnedTransaction`, or `unpinned` for a client outside any).
 */
export type Pin = <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>

export interface Pins {
  readonly from: Pin
  readonly to: Pin
}

/** A statement run outside any transaction, whatever transaction of another client surrounds it. */
export const unpinned: Pin = (effect) => Effect.mapInputContext(effect, Context.omit(SqlClient.TransactionConnection))

/** `body` in a transaction of `sql` (outside any other client's), with the pin that runs a statement on it. */
export const pinnedTransaction = <A, E>(sql: SqlClient.SqlClient, body: (pin: Pin) => Effect.Effect<A, E>) =>
  unpinned(transaction(sql)(Effect.flatMap(
    // Always there inside the transaction: its absence would be a bug of @effect/sql's.
    Effect.orDie(Effect.flatten(Effect.serviceOption(SqlClient.TransactionConnection))),
    (connection) => body((effect) => Effect.provideService(effect, SqlClient.TransactionConnection, connection))
  )))

export interface CopiedRows {
  readonly tables: number
  readonly rows: number
}

/**
 * Every row of kern's tables from one kern.db into another, each created by its own migrations (SQLite's file, an
 * agent's schema on PostgreSQL, either way): the tables both have, the columns both have (an archive of an older kern
 * lacks a newer column; the target's default fills it). The target's tables must be empty, and the caller runs the
 * write in one transaction whose foreign keys are checked at its commit (rows are copied table by table, not in the
 * order they refer to each other), and a read of PostgreSQL in a transaction of its own (its cursors live in one).
 */
export const copyRows = (from: SqlClient.SqlClient, to: SqlClient.SqlClient, on: Pins): Effect.Effect<CopiedRows, unknown> =>
  Effect.gen(function*() {
    const source = yield* on.from(tableColumns(from))
    const target = yield* on.to(tableColumns(to))
    let tables = 0
    let rows = 0
    for (const [table, columns] of target) {
      const there = source.get(table)
      if (notCopied(table) || there === undefined) continue
      const shared = columns.filter((column) => there.includes(column))
      const list = shared.map((column) => `"${column}"`).join(", ")
      tables++
      yield* readRows(from, table, `SELECT ${list} FROM "${table}"`, on.from).pipe(
        Stream.grouped(batchRows),
        Stream.runForEach((chunk) => {
          const records = Array.from(chunk, (values) => Object.fromEntries(shared.map((column, i) => [column, values[i]])))
          rows += records.length
          return on.to(to`INSERT INTO ${to(table)} ${to.insert(records)}`)
        })
      )
    }
    return { tables, rows }
  }).pipe(Effect.withSpan("kern.backup.copyRows"))

/**
 * A query's rows as value arrays, a batch at a time: on PostgreSQL through a cursor of the caller's transaction (a
 * million events never sit in memory at once); SQLite's file is local, and read whole.
 */
const readRows = (sql: SqlClient.SqlClient, table: string, query: string, on: Pin): Stream.Stream<ReadonlyArray<unknown>, unknown> =>
  sql.onDialectOrElse({
    // A cursor per table, closed with the transaction.
    pg: () =>
      Stream.unwrap(Effect.as(on(sql.unsafe(`DECLARE "kern_copy_${table}" NO SCROLL CURSOR FOR ${query}`)), Stream.repeatEffectOption(
        on(sql.unsafe(`FETCH ${batchRows} FROM "kern_copy_${table}"`).values).pipe(
          Effect.mapError(Option.some),
          Effect.filterOrFail((batch) => batch.length > 0, () => Option.none())
        )
      ).pipe(Stream.flattenIterables))),
    orElse: () => Stream.unwrap(Effect.map(on(sql.unsafe(query).values), (values) => Stream.fromIterable(values)))
  })
