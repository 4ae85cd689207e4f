// What the kept outputs of the quick commands share (`kern status` of a stopped agent: src/quick/statusCache.ts;
// `kern sessions list`: src/quick/sessionsCache.ts): a command's output kept in a file of the agent folder under a
// key made of everything the command read, printed again by a plain bundle (no Effect, no schema, no SQLite) while
// the key is the same.
//
// A file is known by its device, inode, mode, size and modification time. An output is kept only when nothing it read
// changed while it was made (the key taken before equals the key taken after) and every file of the folder has settled
// (src/quick/statusSettle.ts): any later change then gives a file a later time, and the key another value.
import * as NodeFs from "node:fs"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { type AgentPaths, agentPaths } from "../config/paths.js"
import { reportEnvironment } from "../config/reportEnvironment.js"
import { sha256Hex } from "./sha256.js"
import { type FileStamp, settled } from "./statusSettle.js"

/** The output a kept command prints, as the command line's own run ends. */
export interface KeptOutput {
  readonly stdout: string
  readonly failure: string | null
}

/** The key of an ask, and whether it may be kept under it. */
export interface AskKey {
  readonly key: string
  /** Every file of the folder the key names has settled, and nothing the command reads escapes the key. */
  readonly keepable: boolean
}

export const isAbsent = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code
  return code === "ENOENT" || code === "ENOTDIR"
}

/** The file system's statfs type of `file`, none when it cannot be asked. */
const fileSystemOf = (file: string): number | undefined => {
  try {
    return NodeFs.statfsSync(file).type
  } catch {
    return undefined
  }
}

/** A file as a key knows it, and when its content last changed (for the settle rule); none of it when it is not there. */
export interface Stamp {
  readonly text: string
  readonly changed: FileStamp | undefined
}

/**
 * A file as the key knows it, "-" when it is not there (or, for `emptyIsAbsent`, empty), and when its content last
 * changed (ns). Not its change time: SQLite run as root gives kern.db's WAL to its owner again on every open (a change
 * time, the same bytes), so each run would change the key it was kept under.
 */
export const stampOf = (file: string, emptyIsAbsent = false): Stamp => {
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

/** A file's text, none when it is not there; any other failure is thrown. */
export const readIfThere = (file: string): string | undefined => {
  try {
    return NodeFs.readFileSync(file, "utf8")
  } catch (error) {
    if (isAbsent(error)) return undefined
    throw error
  }
}

/** The names in `dir` (those ending in `suffix`), sorted; none when it is not there. */
export const namesIn = (dir: string, suffix = ""): Array<string> => {
  try {
    return NodeFs.readdirSync(dir).filter((name) => name.endsWith(suffix)).sort()
  } catch (error) {
    if (isAbsent(error)) return []
    throw error
  }
}

/** What every kept command's key starts from: the folder's files as the config reads them, and its sessions. */
export interface FolderBasis {
  readonly paths: AgentPaths
  readonly configText: string
  readonly envText: string | undefined
  /** The session files' names, sorted. */
  readonly sessions: ReadonlyArray<string>
  /** The variables of the environment the config reads (src/config/reportEnvironment.ts), sorted by name. */
  readonly environment: ReadonlyArray<readonly [string, string]>
}

/** The basis of a key for the folder `dir`; none without config.json (not an agent folder: nothing is kept). */
export const folderBasis = (dir: string, env: Readonly<Record<string, string | undefined>>): FolderBasis | undefined => {
  const paths = agentPaths(dir)
  const configText = readIfThere(paths.configFile)
  if (configText === undefined) return undefined
  return {
    paths,
    configText,
    envText: readIfThere(paths.envFile),
    sessions: namesIn(paths.sessionsDir, ".jsonl"),
    environment: Object.entries(reportEnvironment(env, configText)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  }
}

/** Whether every stamp has settled at `nowMs` (a file that is not there has nothing to settle). */
export const allSettled = (stamps: ReadonlyArray<Stamp>, nowMs: number): boolean =>
  stamps.every((s) => s.changed === undefined || settled(s.changed, nowMs))

/** The key of what a command read: its own parts (the ask, texts it read) and its files with their stamps. */
export const keyOf = (parts: ReadonlyArray<unknown>, files: ReadonlyArray<string>, stamps: ReadonlyArray<Stamp>): string =>
  sha256Hex(JSON.stringify([...parts, files.map((file, i) => [file, stamps[i]!.text])]))

/** How many outputs a cache file keeps, the newest first. */
const keptEntries = 4

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

const entriesIn = (cacheFile: string): ReadonlyArray<Entry> => {
  try {
    const parsed: unknown = JSON.parse(NodeFs.readFileSync(cacheFile, "utf8"))
    const entries = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)["entries"] : undefined
    return Array.isArray(entries) ? entries.filter(isEntry) : []
  } catch {
    return []
  }
}

/** What the command wrote, as it is: one that would need neutralizing is not one the command made. */
const printable = (text: string) => neutralizeControls(text) === text && !text.includes("\r")

/** The output `cacheFile` keeps under `key` while the clock has not changed it; none otherwise. */
export const keptIn = (cacheFile: string, key: AskKey | undefined, nowMs: number): KeptOutput | undefined => {
  // Whether it may be kept was settled when it was: the same key is the same folder.
  if (key === undefined) return undefined
  const entry = entriesIn(cacheFile).find((candidate) => candidate.key === key.key)
  if (entry === undefined || !(nowMs < entry.steadyUntilMs)) return undefined
  if (!printable(entry.stdout) || (entry.failure !== null && !printable(entry.failure))) return undefined
  return { stdout: entry.stdout, failure: entry.failure }
}

/**
 * Keeps `output` in `cacheFile`, made between the keys `before` and `after`, when nothing it read changed meanwhile,
 * it may be kept, and the clock has not already changed it (`steadyUntilMs`: none for an output the clock changes
 * at any time); a folder kern cannot write to only means nothing is kept.
 */
export const keepIn = (
  cacheFile: string,
  before: AskKey | undefined,
  after: AskKey | undefined,
  output: KeptOutput & { readonly steadyUntilMs: number | null },
  nowMs: number
): void => {
  if (before === undefined || after === undefined || before.key !== after.key || !before.keepable || !after.keepable) return
  if (output.steadyUntilMs === null || !(nowMs < output.steadyUntilMs)) return
  const entry: Entry = { key: before.key, stdout: output.stdout, failure: output.failure, steadyUntilMs: output.steadyUntilMs }
  const entries = [entry, ...entriesIn(cacheFile).filter((kept) => kept.key !== entry.key)].slice(0, keptEntries)
  const temp = `${cacheFile}.${process.pid}.tmp`
  try {
    // Private as the folder's other files (src/storage/privateFiles.ts privateFileMode, not imported: it loads Effect).
    NodeFs.writeFileSync(temp, `${JSON.stringify({ entries })}\n`, { mode: 0o600 })
    NodeFs.renameSync(temp, cacheFile)
  } catch {
    try {
      NodeFs.rmSync(temp, { force: true })
    } catch {
      // Nothing was kept; the next ask runs the command again.
    }
  }
}
