import BetterSqlite3 from "better-sqlite3"
import { Effect, Option, type Scope } from "effect"

/**
 * A number that moves whenever kern.db changes: a commit by any connection, this process's own or another process's.
 * It is SQLite's `PRAGMA data_version` on a connection of its own that never writes, read synchronously (about a
 * microsecond; a statement through SqlClient costs 40–200 µs): what a cache consulted on every tool call asks before
 * trusting itself, so that an operator's change made by another `kern` process is seen by the next call.
 *
 * None where there is nothing to open (an in-memory database: only its one connection sees it) or the connection
 * cannot be opened (said in a warning); the caller then reads through every time. A read that fails answers NaN,
 * which equals nothing, so the cache reads through.
 */
export const changeCounter = (file: string): Effect.Effect<Option.Option<() => number>, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try(() => {
      const db = new BetterSqlite3(file, { fileMustExist: true })
      try {
        return { db, version: db.prepare("PRAGMA data_version").pluck() }
      } catch (error) {
        db.close()
        throw error
      }
    }).pipe(
      Effect.tapError((error) => Effect.logWarning(`kern: ${file}: no change counter (every read goes to kern.db): ${String(error)}`)),
      Effect.option
    ),
    (opened) => Effect.sync(() => Option.map(opened, ({ db }) => db.close()))
  ).pipe(
    Effect.map(Option.map(({ version }) => () => {
      try {
        return Number(version.get())
      } catch {
        return Number.NaN
      }
    }))
  )
