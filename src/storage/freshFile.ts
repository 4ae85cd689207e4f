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
 * The bytes of a database holding the snapshot, made in memory, marked as a WAL database (the header's file format
 * write and read versions, bytes 18 and 19, are 2 in WAL mode: https://sqlite.org/fileformat2.html#file_format_version_numbers),
 * as kern.db is always opened.
 */
export const freshDatabaseBytes = (): Buffer => {
  const db = new BetterSqlite3(":memory:")
  try {
    db.exec("BEGIN")
    db.exec(script())
    db.exec("COMMIT")
    const bytes = db.serialize()
    bytes[18] = 2
    bytes[19] = 2
    return bytes
  } finally {
    db.close()
  }
}

/**
 * Gives a new, empty kern.db file the schema snapshot: the database is made in memory and its bytes written to the
 * file in one write and one fsync. Made in the file itself, SQLite switched it to WAL through a rollback journal, wrote
 * every page to the WAL and copied them into the file when the connection closed: six fsyncs and twice the pages
 * written, 10–60 ms of a cold process's first open (a new agent, or kern.db lost) on a busy disk. Only a file of 0
 * bytes is touched (a database kern or anyone made is never), and only while it is still empty once SQLite's
 * exclusive lock on it is held, so no other connection reads or writes it meanwhile: another process creating it
 * first wins (BEGIN EXCLUSIVE waits for it) and this one changes nothing. A failed write leaves the file empty again.
 * Returns whether it created the schema; throws what it met (the caller leaves the decision to the migrator then),
 * SQLITE_BUSY when another connection held the file past `busyTimeoutMs`.
 */
export const createFreshFile = (file: string, busyTimeoutMs = 5_000): boolean => {
  if (NodeFs.statSync(file).size !== 0) return false
  const bytes = freshDatabaseBytes()
  // Opened before SQLite's connection and closed after it: closing a descriptor of the file drops every POSIX lock
  // this process holds on it, SQLite's among them.
  const fd = NodeFs.openSync(file, "r+")
  try {
    const db = new BetterSqlite3(file, { timeout: busyTimeoutMs })
    try {
      db.exec("BEGIN EXCLUSIVE")
      try {
        if (NodeFs.fstatSync(fd).size !== 0) return false
        try {
          for (let written = 0; written < bytes.length;) {
            written += NodeFs.writeSync(fd, bytes, written, bytes.length - written, written)
          }
          NodeFs.fsyncSync(fd)
        } catch (error) {
          NodeFs.ftruncateSync(fd, 0)
          throw error
        }
        return true
      } finally {
        // Nothing was changed through SQLite: this only releases its lock.
        db.exec("ROLLBACK")
      }
    } finally {
      db.close()
    }
  } finally {
    NodeFs.closeSync(fd)
  }
}
