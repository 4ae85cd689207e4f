import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as NodePath from "node:path"

const worktree = NodePath.resolve(import.meta.dirname, "../..")

const script = `
const Database = require("better-sqlite3")
const db = new Database(process.argv[1])
db.exec("BEGIN IMMEDIATE")
process.stdout.write("locked\\n")
process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.stdout.write("released\\n"); process.exit(0) })
`

/**
 * Another process holding kern.db's write lock (a real better-sqlite3 connection in `BEGIN IMMEDIATE`) until
 * `release` (or the scope ends): kern's writes wait out their busy timeout and fail with SQLITE_BUSY meanwhile.
 */
export const holdWriteLock = (dbFile: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly release: Effect.Effect<void>; readonly child: ReturnType<typeof spawn> }, Error>((resume) => {
      const child = spawn(process.execPath, ["-e", script, dbFile], { cwd: worktree, stdio: ["pipe", "pipe", "inherit"] })
      let out = ""
      const release = Effect.async<void>((done) => {
        if (child.exitCode !== null) return done(Effect.void)
        child.once("exit", () => done(Effect.void))
        child.stdin?.write("go\n")
      })
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        if (out.includes("locked\n")) resume(Effect.succeed({ release, child }))
      })
      child.once("exit", (code) => {
        if (!out.includes("locked\n")) resume(Effect.fail(new Error(`the lock holder exited (${code}) before locking`)))
      })
    }),
    ({ child, release }) => child.exitCode === null ? release : Effect.void
  ).pipe(Effect.map(({ release }) => ({ release })))
