import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { freePortAsync } from "./freePort.js"
import { makeTempDir } from "./tempDir.js"

/** A throwaway PostgreSQL server on a loopback port: its connection URL and its folder. */
export interface Postgres {
  readonly url: Redacted.Redacted
  readonly port: number
  readonly dir: string
}

/** Debian's server binaries (`apt-get install -y postgresql`); .ci/run installs them. */
const binDir = "/usr/lib/postgresql/15/bin"

/** initdb and pg_ctl refuse to run as root: as root they run as the `postgres` user the Debian package made. */
const asServerUser = (command: string, args: ReadonlyArray<string>) =>
  process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] as const : [command, args] as const

const run = (command: string, args: ReadonlyArray<string>) => {
  const [file, argv] = asServerUser(command, args)
  const result = spawnSync(file, [...argv], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}: ${result.stdout}${result.stderr}`)
}

/**
 * Starts a PostgreSQL server of its own in a temp folder (initdb, then `pg_ctl start` listening on 127.0.0.1 only, a
 * free port, trust auth for the user `kern`), stopped (`pg_ctl stop -m immediate`) when the scope closes. Fails the
 * test with what the tools said when the server cannot be set up.
 */
export const startPostgres: Effect.Effect<Postgres, never, import("effect/Scope").Scope> = Effect.acquireRelease(
  Effect.promise(async () => {
    const dir = makeTempDir("kern-pg-")
    const data = NodePath.join(dir, "data")
    if (process.getuid?.() === 0) execFileSync("chown", ["postgres:postgres", dir])
    const port = await freePortAsync()
    run(NodePath.join(binDir, "initdb"), ["-D", data, "-U", "kern", "--auth=trust", "-E", "UTF8", "--no-sync"])
    run(NodePath.join(binDir, "pg_ctl"), [
      "-D", data, "-l", NodePath.join(dir, "server.log"), "-w", "-t", "120", "start",
      "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off`
    ])
    return { url: Redacted.make(`postgres://kern@127.0.0.1:${port}/postgres`), port, dir }
  }),
  (pg) =>
    Effect.sync(() => {
      run(NodePath.join(binDir, "pg_ctl"), ["-D", NodePath.join(pg.dir, "data"), "-m", "immediate", "-w", "stop"])
      NodeFs.rmSync(pg.dir, { recursive: true, force: true })
    })
)

/**
 * Whether `runners` cluster runners hold the `shards` shards between them: the shards' advisory locks on the server at
 * `url`, granted to that many connections (each runner holds its shards on one). A test waits for it before it
 * counts on every runner having joined. Only the single-key form is counted (objsubid 1): kern's own migration locks
 * take the two-key form (src/storage/pg/migrationLock.ts), and one held while a runner builds would otherwise count
 * as a second runner's.
 */
export const shardLocksHeld = (url: Redacted.Redacted<string>, runners: number, shards: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ holders: number; locks: number }>`SELECT count(DISTINCT pid)::int AS holders, count(*)::int AS locks
      FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted`
    return rows[0]?.holders === runners && rows[0]?.locks === shards
  }).pipe(Effect.provide(PgClient.layer({ url, maxConnections: 1 }).pipe(Layer.orDie)), Effect.orDie)
