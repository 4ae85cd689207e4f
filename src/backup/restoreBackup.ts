import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { loadConfig } from "../config/AgentConfig.js"
import { databaseTarget } from "../config/database.js"
import { agentPaths } from "../config/paths.js"
import { relocateSessions } from "../recall/relocateSessions.js"
import * as RecallStoreSqlite from "../recall/RecallStoreSqlite.js"
import * as Database from "../storage/Database.js"
import { tightenPrivateDir } from "../storage/privateFiles.js"
import { BackupError, describe } from "./BackupError.js"
import { integrityProblems } from "./databaseCopy.js"
import { artifactsPrefix, bundleEntry, databaseEntry, sessionsPrefix } from "./entryPaths.js"
import { restoreBundle } from "./memoryBundle.js"
import { importIntoPostgres, schemaText } from "./postgresRows.js"
import { fitsOn, readBackup } from "./readBackup.js"
import { stagingDir } from "./stagingDir.js"

export interface RestoreReport {
  readonly dir: string
  readonly agent: string
  readonly createdAt: string
  readonly branch: string | undefined
  readonly sessions: number
  readonly artifacts: number
  readonly secrets: boolean
  /** Where kern.db's rows went when the config puts them on PostgreSQL (`schema … on postgres://…`); else `.kern/kern.db`. */
  readonly database: string | undefined
}

/** The restored index keeps what it indexed of each restored session (relocateSessions.ts); an empty kern.db has none. */
const keepRecallIndex = (dbFile: string, sessionsDir: string) =>
  NodeFs.statSync(dbFile, { throwIfNoEntry: false })?.size === 0
    ? Effect.void
    : Effect.flatMap(RecallStoreSqlite.make, (store) => relocateSessions(store, sessionsDir)).pipe(
      Effect.provide(Database.layer({ filename: dbFile })),
      Effect.mapError((error) => new BackupError({ reason: "database", message: `${dbFile}: could not keep the recall index: ${error.message}` }))
    )

const inTheWay = (message: string) => new BackupError({ reason: "in-the-way", message })

/** Empties `dir` (it was empty or made for the restore) or removes it: a failed restore leaves nothing behind. */
const undo = (dir: string, made: boolean) =>
  Effect.sync(() => {
    if (made) {
      NodeFs.rmSync(dir, { recursive: true, force: true })
      return
    }
    for (const name of NodeFs.readdirSync(dir)) NodeFs.rmSync(NodePath.join(dir, name), { recursive: true, force: true })
  })

/**
 * `kern restore FILE --dir NEW`: NEW must not exist or be empty. The archive is unpacked into a staging folder inside
 * NEW, every entry checked as it comes (archiveReader.ts), so nothing is ever written outside NEW; kern.db is checked
 * by SQLite; the bundle becomes NEW's repository with its history, and `.kern/` moves into place, private.
 */
export const restoreBackup = Effect.fn("kern.backup.restore")(function*(file: string, dir: string) {
  const target = NodePath.resolve(dir)
  const stat = NodeFs.lstatSync(target, { throwIfNoEntry: false })
  if (stat !== undefined && !stat.isDirectory()) return yield* inTheWay(`${dir} exists and is not a folder`)
  if (stat !== undefined && NodeFs.readdirSync(target).length > 0) {
    return yield* inTheWay(`${dir} is not empty: kern restore makes a new agent folder and never overwrites one; name a new folder`)
  }
  if (!NodeFs.existsSync(file)) return yield* new BackupError({ reason: "io", message: `${file} does not exist` })
  if (!NodeFs.existsSync(NodePath.dirname(target))) {
    return yield* new BackupError({ reason: "io", message: `the folder ${NodePath.dirname(target)} does not exist` })
  }
  yield* Effect.try({
    try: () => stat === undefined && NodeFs.mkdirSync(target, { mode: 0o755 }),
    catch: (error) => new BackupError({ reason: "io", message: `could not make ${dir}: ${describe(error)}` })
  })
  return yield* Effect.scoped(Effect.gen(function*() {
    const staging = yield* stagingDir(target, ".kern-restore-")
    const manifest = yield* readBackup(file, {
      // The content, and the memory checked out beside its bundle.
      onManifest: fitsOn(target, (manifest) => manifest.totalBytes + (manifest.entries.find((e) => e.path === bundleEntry)?.size ?? 0)),
      destination: (entry) => NodePath.join(staging, entry.path)
    })
    const damage = yield* integrityProblems(NodePath.join(staging, databaseEntry))
    if (damage.length > 0) {
      return yield* new BackupError({ reason: "refused", message: `${file}: its kern.db fails SQLite's integrity check: ${damage.join("; ")}` })
    }
    const memory = yield* restoreBundle(NodePath.join(staging, bundleEntry), target)
    const paths = agentPaths(target)
    // kern never commits .kern/ (.gitignore): a bundle that brings it would mix its files with the restored ones.
    if (NodeFs.existsSync(paths.kernDir)) {
      return yield* new BackupError({ reason: "refused", message: `${file}: its memory repository holds .kern/, which kern never commits` })
    }
    yield* Effect.try({
      try: () => NodeFs.renameSync(NodePath.join(staging, ".kern"), paths.kernDir),
      catch: (error) => new BackupError({ reason: "io", message: `could not move .kern into ${dir}: ${describe(error)}` })
    })
    const failures = yield* tightenPrivateDir(paths.kernDir)
    if (failures.length > 0) return yield* new BackupError({ reason: "io", message: failures.map((failure) => failure.message).join("; ") })
    // The config may put kern.db on PostgreSQL: the archive's rows go into its schema (the folder has no kern.db then).
    const { config, env } = yield* loadConfig(target)
    const database = yield* databaseTarget(config, env, paths.dbFile).pipe(
      Effect.mapError((error) =>
        new BackupError({
          reason: "database",
          message: `the restored config puts kern.db on PostgreSQL, and ${error.message}: set it in the environment and restore again`
        })
      )
    )
    const where = database._tag === "postgres" ? schemaText(database) : undefined
    if (database._tag === "postgres") yield* importIntoPostgres(paths.dbFile, database)
    else yield* keepRecallIndex(paths.dbFile, paths.sessionsDir)
    return {
      database: where,
      dir: target,
      agent: manifest.agent,
      createdAt: manifest.createdAt,
      branch: memory.branch,
      sessions: manifest.entries.filter((entry) => entry.path.startsWith(sessionsPrefix)).length,
      artifacts: manifest.entries.filter((entry) => entry.path.startsWith(artifactsPrefix)).length,
      secrets: manifest.secrets
    } satisfies RestoreReport
  })).pipe(Effect.onError(() => undo(target, stat === undefined)))
})
