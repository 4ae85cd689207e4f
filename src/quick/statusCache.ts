// `kern status` of a stopped agent, kept for the next ask (`.kern/status-cache.json`): the command line's own report
// (src/quick/status.ts) keeps its output under a key made of everything the report reads, and the next `kern status`
// (src/quick/statusAsk.ts, plain code that loads no Effect, no schema, no SQLite) prints it when the key is the same.
// Anything else makes the report again: a key that differs, an output the clock has changed since (the spend's
// day, a pending code's expiry: the report's own steadyUntilMs), a folder an agent may serve (its lock, `kern start`'s
// pid file, a host's mark), an unreadable file, an entry that is not one this code writes.
//
// The key covers what the report reads: config.json and .env (their text), the environment variables the report
// reads (src/config/reportEnvironment.ts, the same set a running agent is sent), TZ and the system's zone, kern.db
// and its WAL, the lock and the other serving files, the sessions (their folder and each file), the folder as named
// and as resolved, --json, and the status bundle itself (another kern build makes its own report). A file is known by
// its device, inode, mode, size and modification time. An output is kept only when nothing it read changed while it
// was made (the key taken before equals the key taken after) and every file has settled (src/quick/statusSettle.ts:
// changed long enough ago that a change in the same tick of the file clock cannot hide behind an equal time, 100 ms
// for a local file system's fine stamps, 2 s otherwise): any later change gives the file a later time, and the key
// another value. The environment's values are in the key only as a sha256 digest.
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { agentPaths } from "../config/paths.js"
import { reportEnvironment } from "../config/reportEnvironment.js"
import { servingFiles } from "./chatProbe.js"
import { sha256Hex } from "./sha256.js"
import { type FileStamp, settled } from "./statusSettle.js"

/** The output a kept report prints, as the command line's report ends. */
export interface KeptOutput {
  readonly stdout: string
  readonly failure: string | null
}

/** What an ask of `kern status` is, as far as the kept report's key goes. */
export interface StatusAsk {
  /** The folder as the user named it (`.` when not). */
  readonly dir: string
  readonly json: boolean
  readonly env: Readonly<Record<string, string | undefined>>
  /** dist/quickStatus.cjs, the bundle that makes the report: another build keeps its own. */
  readonly bundle: string
}

/** The key of an ask, and whether it may be kept under it. */
export interface AskKey {
  readonly key: string
  /** Every file of the folder the key names has settled, and none of the files an agent is found by is there. */
  readonly keepable: boolean
}

/** The cache's file in the agent folder. */
export const statusCacheFile = (dir: string) => NodePath.join(agentPaths(dir).kernDir, "status-cache.json")

/** How many outputs the cache keeps (text and --json, a folder named two ways), the newest first. */
const keptEntries = 4

const formatVersion = "kern status cache 1"

const isAbsent = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code
  return code === "ENOENT" || code === "ENOTDIR"
}

/**
 * A file as the key knows it, "-" when it is not there (or, for `emptyIsAbsent`, empty), and when its content last changed (ns), for the settle rule.
 * Not its change time: SQLite run as root gives kern.db's WAL to its owner again on every open (a change time, the
 * same bytes), so each report would change the key it was kept under.
 */
const stamp = (file: string, emptyIsAbsent = false): { readonly text: string; readonly changed: FileStamp | undefined } => {
  try {
    const info = NodeFs.statSync(file, { bigint: true })
    if (emptyIsAbsent && info.size === 0n && info.isFile()) return { text: "-", changed: undefined }
    return {
      text: `${info.dev}:${info.ino}:${info.mode}:${info.size}:${info.mtimeNs}`,
      changed: { mtimeNs: info.mtimeNs, fileSystem: () => fileSystemOf(file) }
    }
  } catch (error) {
    if (isAbsent(error)) return { text: "-", changed: undefined }
    throw error
  }
}

/** The file system's statfs type of `file`, none when it cannot be asked. */
const fileSystemOf = (file: string): number | undefined => {
  try {
    return NodeFs.statfsSync(file).type
  } catch {
    return undefined
  }
}

const readIfThere = (file: string): string | undefined => {
  try {
    return NodeFs.readFileSync(file, "utf8")
  } catch (error) {
    if (isAbsent(error)) return undefined
    throw error
  }
}

/**
 * The key of `ask` as the folder is now, or none when one cannot be made for sure (no config.json, an unreadable
 * file).
 */
export const askKey = (ask: StatusAsk, nowMs: number = Date.now()): AskKey | undefined => {
  try {
    const paths = agentPaths(ask.dir)
    const configText = readIfThere(paths.configFile)
    if (configText === undefined) return undefined
    const envText = readIfThere(paths.envFile)
    const sessions = (() => {
      try {
        return NodeFs.readdirSync(paths.sessionsDir).filter((name) => name.endsWith(".jsonl")).sort()
      } catch (error) {
        if (isAbsent(error)) return []
        throw error
      }
    })()
    const serving = servingFiles(ask.dir)
    const files = [
      ask.bundle,
      "/etc/localtime",
      paths.configFile,
      paths.envFile,
      paths.dbFile,
      `${paths.dbFile}-wal`,
      ...serving,
      paths.sessionsDir,
      ...sessions.map((name) => NodePath.join(paths.sessionsDir, name))
    ]
    // An empty WAL holds what none holds: the report's own read of kern.db makes one.
    const wal = `${paths.dbFile}-wal`
    const stamps = files.map((file) => stamp(file, file === wal))
    const environment = Object.entries(reportEnvironment(ask.env, configText)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const key = sha256Hex(JSON.stringify([
      formatVersion,
      ask.dir,
      paths.dir,
      ask.json,
      ask.env["TZ"] ?? null,
      environment,
      configText,
      envText ?? null,
      files.map((file, i) => [file, stamps[i]!.text])
    ]))
    // The bundle and the system's zone file are not the folder's: an install's age says nothing of a race.
    const folderSettled = stamps.slice(2).every((s) => s.changed === undefined || settled(s.changed, nowMs))
    const unserved = serving.every((_, i) => stamps[6 + i]!.text === "-")
    return { key, keepable: folderSettled && unserved }
  } catch {
    return undefined
  }
}

interface Entry extends KeptOutput {
  readonly key: string
  readonly steadyUntilMs: number
}

const isEntry = (value: unknown): value is Entry => {
  if (typeof value !== "object" || value === null) return false
  const { failure, key, stdout, steadyUntilMs } = value as Record<string, unknown>
  return typeof key === "string" && typeof stdout === "string" && (failure === null || typeof failure === "string") &&
    typeof steadyUntilMs === "number"
}

const entriesIn = (dir: string): ReadonlyArray<Entry> => {
  try {
    const parsed: unknown = JSON.parse(NodeFs.readFileSync(statusCacheFile(dir), "utf8"))
    const entries = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)["entries"] : undefined
    return Array.isArray(entries) ? entries.filter(isEntry) : []
  } catch {
    return []
  }
}

/** What the report wrote, as it is: one that would need neutralizing is not one the report made. */
const printable = (text: string) => neutralizeControls(text) === text && !text.includes("\r")

/** The output kept for `ask` when the folder is as it was and the clock has not changed it; none otherwise. */
export const keptOutput = (ask: StatusAsk, nowMs: number = Date.now()): KeptOutput | undefined => {
  // Whether it may be kept was settled when it was: the same key is the same folder.
  const key = askKey(ask, nowMs)
  if (key === undefined) return undefined
  const entry = entriesIn(ask.dir).find((candidate) => candidate.key === key.key)
  if (entry === undefined || !(nowMs < entry.steadyUntilMs)) return undefined
  if (!printable(entry.stdout) || (entry.failure !== null && !printable(entry.failure))) return undefined
  return { stdout: entry.stdout, failure: entry.failure }
}

/**
 * Keeps `output`, made between the keys `before` and `after`, when nothing it read changed meanwhile and it may be
 * kept; a folder kern cannot write to only means nothing is kept.
 */
export const keepOutput = (
  dir: string,
  before: AskKey | undefined,
  after: AskKey | undefined,
  output: KeptOutput & { readonly steadyUntilMs: number | null },
  nowMs: number = Date.now()
): void => {
  if (before === undefined || after === undefined || before.key !== after.key || !before.keepable || !after.keepable) return
  if (output.steadyUntilMs === null || !(nowMs < output.steadyUntilMs)) return
  const file = statusCacheFile(dir)
  const entry: Entry = { key: before.key, stdout: output.stdout, failure: output.failure, steadyUntilMs: output.steadyUntilMs }
  const entries = [entry, ...entriesIn(dir).filter((kept) => kept.key !== entry.key)].slice(0, keptEntries)
  const temp = `${file}.${process.pid}.tmp`
  try {
    // Private as the folder's other files (src/storage/privateFiles.ts privateFileMode, not imported: it loads Effect).
    NodeFs.writeFileSync(temp, `${JSON.stringify({ entries })}\n`, { mode: 0o600 })
    NodeFs.renameSync(temp, file)
  } catch {
    try {
      NodeFs.rmSync(temp, { force: true })
    } catch {
      // Nothing was kept; the next ask makes the report again.
    }
  }
}
