import { Clock, DateTime, Effect, Runtime, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import pkg from "../../package.json" with { type: "json" }
import { loadConfig } from "../config/AgentConfig.js"
import { databaseTarget } from "../config/database.js"
import { NotAnAgentFolder } from "../config/errors.js"
import { agentPaths } from "../config/paths.js"
import { counted } from "../config/counted.js"
import { formatBytes } from "../tools/textFile.js"
import { type ArchivedFile, FileChanged, snapshotFile, writeArchive } from "./archiveWriter.js"
import { BackupError, describe } from "./BackupError.js"
import { copyDatabase } from "./databaseCopy.js"
import { exportFromPostgres, schemaText } from "./postgresRows.js"
import { artifactsPrefix, bundleEntry, configEntry, databaseEntry, envEntry, mediaPrefix, sessionsPrefix } from "./entryPaths.js"
import { BackupManifest, ManifestJson } from "./manifest.js"
import { createBundle } from "./memoryBundle.js"
import { stagingDir } from "./stagingDir.js"

export interface BackupOptions {
  readonly dir: string
  readonly output: string
  readonly includeSecrets: boolean
  readonly force: boolean
  /** A line of progress or a notice (stderr). */
  readonly report: (line: string) => Effect.Effect<void>
}

export interface BackupSummary {
  readonly file: string
  readonly bytes: number
  readonly agent: string
  readonly commits: number
  readonly uncommitted: number
  readonly sessions: number
  readonly artifacts: number
  readonly secrets: boolean
  readonly skipped: ReadonlyArray<string>
}

const io = (what: string) => (error: unknown) => new BackupError({ reason: "io", message: `${what}: ${describe(error)}` })

/**
 * The regular files below `dir` (nested when `nested`), as entry paths under `prefix`. Anything else (a symlink, a
 * socket, a FIFO, a folder where files are expected) is not an agent's file: it is left out and named in `skipped`.
 */
const regularFiles = (dir: string, prefix: string, nested: boolean, skipped: Array<string>): Array<{ entry: string; file: string }> => {
  if (!NodeFs.existsSync(dir)) return []
  return NodeFs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)).flatMap((item) => {
    const file = NodePath.join(dir, item.name)
    const entry = `${prefix}${item.name}`
    if (item.isFile()) return [{ entry, file }]
    if (item.isDirectory() && nested) return regularFiles(file, `${entry}/`, nested, skipped)
    skipped.push(`${entry} (${item.isSymbolicLink() ? "a symlink" : item.isDirectory() ? "a folder" : "not a regular file"})`)
    return []
  })
}

/**
 * `kern backup`: kern.db copied online (an agent's schema on PostgreSQL into an SQLite kern.db), the memory repository bundled, then config, sessions and artifacts (and with
 * `includeSecrets` .kern/.env) checksummed and archived into a temporary file beside the output, renamed into place at
 * the end: on any failure the output is untouched and the temporary files are gone.
 */
export const createBackup = Effect.fn("kern.backup.create")(function*(options: BackupOptions) {
  const paths = agentPaths(options.dir)
  const output = NodePath.resolve(options.output)
  if (!NodeFs.existsSync(paths.dir)) return yield* new BackupError({ reason: "io", message: `${options.dir} does not exist` })
  if (!NodeFs.existsSync(paths.configFile)) return yield* new NotAnAgentFolder({ dir: options.dir })
  const { config, env } = yield* loadConfig(paths.dir)
  const database = yield* databaseTarget(config, env, paths.dbFile).pipe(
    Effect.mapError((error) => new BackupError({ reason: "database", message: error.message }))
  )
  if (NodePath.relative(paths.kernDir, output).split(NodePath.sep)[0] !== "..") {
    return yield* new BackupError({ reason: "in-the-way", message: `${options.output} is inside ${paths.kernDir}: write the backup elsewhere` })
  }
  const outputDir = NodePath.dirname(output)
  if (!NodeFs.existsSync(outputDir)) return yield* new BackupError({ reason: "io", message: `the folder ${outputDir} does not exist` })
  const existing = NodeFs.lstatSync(output, { throwIfNoEntry: false })
  if (existing !== undefined && (!options.force || !existing.isFile())) {
    return yield* new BackupError({
      reason: "in-the-way",
      message: existing.isFile() ? `${options.output} exists; use --force to replace it` : `${options.output} exists and is not a file`
    })
  }

  const staging = yield* stagingDir(outputDir, ".kern-backup-")
  const runtime = yield* Effect.runtime<never>()
  const say = (line: string) => Runtime.runSync(runtime)(options.report(line))

  // kern.db first: sessions read after it are at least as new, which a restored agent takes as it takes a crash (the
  // index and summaries catch up); the other way round, the database would name messages the sessions lack.
  const dbCopy = NodePath.join(staging, "kern.db")
  if (database._tag === "postgres") {
    const copied = yield* exportFromPostgres(database, dbCopy)
    yield* options.report(
      `copied kern.db from ${schemaText(database)}: ${counted(copied.rows, "row")} of ${counted(copied.tables, "table")} into an ` +
        `SQLite kern.db (${formatBytes(NodeFs.statSync(dbCopy).size)}); recall's index is not in it: it is rebuilt from the sessions`
    )
  } else {
    yield* copyDatabase(paths.dbFile, dbCopy)
    yield* options.report(`copied kern.db (${formatBytes(NodeFs.statSync(dbCopy).size)})`)
  }
  const bundle = NodePath.join(staging, "memory.bundle")
  const memory = yield* createBundle(paths.dir, bundle)
  yield* options.report(`bundled the memory repository (${counted(memory.commits, "commit")}, ${formatBytes(NodeFs.statSync(bundle).size)})`)
  if (memory.uncommitted > 0) {
    yield* options.report(
      `${counted(memory.uncommitted, "file")} in ${options.dir} ${memory.uncommitted === 1 ? "is" : "are"} not committed: the backup ` +
        "holds the memory as last committed (git status shows what is left out)"
    )
  }

  const skipped: Array<string> = []
  const sources = [
    { entry: databaseEntry, file: dbCopy },
    { entry: bundleEntry, file: bundle },
    { entry: configEntry, file: paths.configFile },
    ...(options.includeSecrets && NodeFs.existsSync(paths.envFile) ? [{ entry: envEntry, file: paths.envFile }] : []),
    ...regularFiles(paths.sessionsDir, sessionsPrefix, false, skipped),
    ...regularFiles(paths.artifactsDir, artifactsPrefix, true, skipped),
    ...regularFiles(paths.mediaDir, mediaPrefix, false, skipped)
  ]
  if (options.includeSecrets && !NodeFs.existsSync(paths.envFile)) yield* options.report(`there is no ${paths.envFile}: no secrets to include`)
  for (const line of skipped) yield* options.report(`left out ${line}`)
  const files: Array<ArchivedFile> = yield* Effect.tryPromise({
    try: async () => {
      const all: Array<ArchivedFile> = []
      for (const source of sources) all.push(await snapshotFile(source.entry, source.file))
      return all
    },
    catch: io("could not read the agent's files")
  })
  const total = files.reduce((sum, file) => sum + file.size, 0)
  const createdAt = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
  const manifest = new BackupManifest({
    format: "kern-backup",
    formatVersion: 1,
    kernVersion: pkg.version,
    agent: config.name,
    createdAt,
    secrets: files.some((file) => file.entry === envEntry),
    head: memory.head,
    entries: files.map(({ entry, sha256, size }) => ({ path: entry, size, sha256 }))
  })
  const manifestText = `${Schema.encodeSync(ManifestJson)(manifest)}\n`

  const sessions = files.filter((file) => file.entry.startsWith(sessionsPrefix)).length
  const artifacts = files.filter((file) => file.entry.startsWith(artifactsPrefix)).length
  yield* options.report(`archiving ${formatBytes(total)}: kern.db, the memory bundle, config, ${counted(sessions, "session")}, ${counted(artifacts, "artifact")}`)
  const temp = NodePath.join(staging, "archive")
  // A line every tenth of the way on long work: sizes, not time (no timer in it).
  let shown = 0
  const progress = (bytes: number) => {
    const tenth = Math.floor((bytes / Math.max(total, 1)) * 10)
    if (total >= 16 * 1024 * 1024 && tenth > shown && tenth < 10) {
      shown = tenth
      say(`archived ${formatBytes(bytes)} of ${formatBytes(total)}`)
    }
  }
  yield* Effect.tryPromise({
    try: () => writeArchive(temp, manifestText, files, progress),
    catch: (error) =>
      error instanceof FileChanged
        ? new BackupError({ reason: "changed", message: `${error.message} (rewritten, not appended to): run kern backup again` })
        : io(`could not write ${temp}`)(error)
  })
  yield* Effect.try({
    try: () => {
      NodeFs.chmodSync(temp, 0o600)
      NodeFs.renameSync(temp, output)
    },
    catch: io(`could not move the archive to ${output}`)
  })
  return {
    file: output,
    bytes: NodeFs.statSync(output).size,
    agent: config.name,
    commits: memory.commits,
    uncommitted: memory.uncommitted,
    sessions,
    artifacts,
    secrets: manifest.secrets,
    skipped
  } satisfies BackupSummary
})
