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
import * as NodePath from "node:path"
import { agentPaths } from "../config/paths.js"
import { servingFiles } from "./chatProbe.js"
import {
  allSettled,
  type AskKey,
  folderBasis,
  keepIn,
  type KeptOutput,
  keptIn,
  keyOf,
  stampOf
} from "./keptOutputs.js"

export type { AskKey, KeptOutput } from "./keptOutputs.js"

/** What an ask of `kern status` is, as far as the kept report's key goes. */
export interface StatusAsk {
  /** The folder as the user named it (`.` when not). */
  readonly dir: string
  readonly json: boolean
  readonly env: Readonly<Record<string, string | undefined>>
  /** dist/quickStatus.cjs, the bundle that makes the report: another build keeps its own. */
  readonly bundle: string
}

/** The cache's file in the agent folder. */
export const statusCacheFile = (dir: string) => NodePath.join(agentPaths(dir).kernDir, "status-cache.json")

const formatVersion = "kern status cache 1"

/**
 * The key of `ask` as the folder is now, or none when one cannot be made for sure (no config.json, an unreadable
 * file).
 */
export const askKey = (ask: StatusAsk, nowMs: number = Date.now()): AskKey | undefined => {
  try {
    const basis = folderBasis(ask.dir, ask.env)
    if (basis === undefined) return undefined
    const { configText, envText, environment, paths, sessions } = basis
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
    const stamps = files.map((file) => stampOf(file, file === wal))
    const key = keyOf(
      [formatVersion, ask.dir, paths.dir, ask.json, ask.env["TZ"] ?? null, environment, configText, envText ?? null],
      files,
      stamps
    )
    // The bundle and the system's zone file are not the folder's: an install's age says nothing of a race.
    const folderSettled = allSettled(stamps.slice(2), nowMs)
    const unserved = serving.every((_, i) => stamps[6 + i]!.text === "-")
    return { key, keepable: folderSettled && unserved }
  } catch {
    return undefined
  }
}

/** The output kept for `ask` when the folder is as it was and the clock has not changed it; none otherwise. */
export const keptOutput = (ask: StatusAsk, nowMs: number = Date.now()): KeptOutput | undefined =>
  keptIn(statusCacheFile(ask.dir), askKey(ask, nowMs), nowMs)

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
): void => keepIn(statusCacheFile(dir), before, after, output, nowMs)
