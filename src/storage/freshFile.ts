import BetterSqlite3 from "better-sqlite3"
import * as NodeFs from "node:fs"
import { freshSchemaMigrations, freshSchemaStatements } from "./freshSchema.js"

/** The schema snapshot and its migrations' records, as one script SQLite runs in one call. */
const script = (): string => {
  const applied = freshSchemaMigrations.map((name) => {
    const [id, ...rest] = name.split("_")
    return `(${Number.parseInt(id ?? "", 10)}, '${rest.join("_").replaceAll("'", "''")}')`
  })
  return [...freshSchemaStatements, `INSERT INTO kern_migrations (migration_id, name) VALUES ${applied.join(", ")}`].join(";\n")
}

/**
 * Gives a new, empty kern.db file the schema snapshot on a connection of its own, in one transaction and one call
 * into SQLite: the same snapshot through SqlClient, a statement at a time, cost a cold process ~50 ms of the first
 * open (a new agent, or kern.db lost), ten times SQLite's own work. Only a file of 0 bytes is touched (a database
 * kern or anyone made is never), and only while the file is still empty once the write lock is held: another
 * process creating it meanwhile wins (BEGIN IMMEDIATE waits for its write) and this one changes nothing. Returns
 * whether it created the schema; throws what SQLite threw (the caller leaves the decision to the migrator then).
 */
export const createFreshFile = (file: string): boolean => {
  if (NodeFs.statSync(file).size !== 0) return false
  const db = new BetterSqlite3(file, { timeout: 5_000 })
  try {
    db.pragma("journal_mode = WAL")
    db.pragma("synchronous = NORMAL")
    db.exec("BEGIN IMMEDIATE")
    try {
      const objects = db.prepare("SELECT count(*) FROM sqlite_master").pluck().get()
      if (objects !== 0) {
        db.exec("ROLLBACK")
        return false
      }
      db.exec(script())
      db.exec("COMMIT")
      return true
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK")
      throw error
    }
  } finally {
    db.close()
  }
}
