// The part of better-sqlite3 (installed with @effect/sql-sqlite-node, which ships no types for it) that kern uses
// directly: changeCounter.ts's and freshFile.ts's connections of their own (and tests that shape a kern.db by hand).
declare module "better-sqlite3" {
  interface Statement {
    pluck(toggle?: boolean): Statement
    get(...params: ReadonlyArray<unknown>): unknown
    run(...params: ReadonlyArray<unknown>): unknown
  }
  interface Database {
    prepare(source: string): Statement
    /** Runs a script of statements (no parameters, no results). */
    exec(source: string): Database
    pragma(source: string): unknown
    readonly inTransaction: boolean
    /** The whole database as the bytes of its file. */
    serialize(): Buffer
    close(): void
  }
  interface Options {
    readonly readonly?: boolean
    readonly fileMustExist?: boolean
    readonly timeout?: number
  }
  const Database: new (filename: string, options?: Options) => Database
  export default Database
}
