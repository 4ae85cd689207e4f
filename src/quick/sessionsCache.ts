// `kern sessions list`, kept for the next ask (`.kern/sessions-cache.json`): the listing's own bundle (src/quick.ts)
// keeps its output under a key made of everything the listing reads, and the next listing (src/quick/sessionsAsk.ts,
// plain code that loads no Effect, no schema) prints it when the key is the same (src/quick/keptOutputs.ts).
//
// The key covers what a listing of the operator's sessions reads: config.json and .env (their text), the environment
// variables the config reads (src/config/reportEnvironment.ts), the sessions (their folder and each file), their
// count records (their folder and each file), the folder as named and as resolved, --json, --conversation, and the
// listing's bundle itself (another kern build lists its own way). A listing that shows anybody else's session reads
// the paired users' names from the database, which may be a PostgreSQL server's: it is never kept. Nor is one that
// wrote anything to stderr (a warning), or failed.
import * as NodePath from "node:path"
import { agentPaths } from "../config/paths.js"
import { mainConversation } from "../kernel/Audience.js"
import { conversationOfSession } from "../session/conversationIds.js"
import { allSettled, type AskKey, folderBasis, keyOf, namesIn, stampOf } from "./keptOutputs.js"

/** What an ask of `kern sessions list` is, as far as the kept listing's key goes. */
export interface SessionsAsk {
  /** The folder as the user named it (`.` when not). */
  readonly dir: string
  readonly json: boolean
  readonly conversation: string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  /** dist/quick.cjs, the bundle that makes the listing: another build keeps its own. */
  readonly bundle: string
}

/** The cache's file in the agent folder. */
export const sessionsCacheFile = (dir: string) => NodePath.join(agentPaths(dir).kernDir, "sessions-cache.json")

/** A listing's output depends on no clock: kept while its key holds. */
export const steadyForever = Number.MAX_SAFE_INTEGER

const formatVersion = "kern sessions list cache 1"

/**
 * The key of `ask` as the folder is now, or none when one cannot be made for sure (no config.json, an unreadable
 * file or folder).
 */
export const sessionsKey = (ask: SessionsAsk, nowMs: number = Date.now()): AskKey | undefined => {
  try {
    const basis = folderBasis(ask.dir, ask.env)
    if (basis === undefined) return undefined
    const { configText, envText, environment, paths, sessions } = basis
    const counts = namesIn(paths.sessionCountsDir)
    const files = [
      ask.bundle,
      paths.configFile,
      paths.envFile,
      paths.sessionsDir,
      ...sessions.map((name) => NodePath.join(paths.sessionsDir, name)),
      paths.sessionCountsDir,
      ...counts.map((name) => NodePath.join(paths.sessionCountsDir, name))
    ]
    const stamps = files.map((file) => stampOf(file))
    const key = keyOf(
      [formatVersion, ask.dir, paths.dir, ask.json, ask.conversation ?? null, environment, configText, envText ?? null],
      files,
      stamps
    )
    const operatorsOnly = sessions.every((name) => conversationOfSession(name.slice(0, -".jsonl".length)) === mainConversation)
    // The bundle is not the folder's: an install's age says nothing of a race.
    return { key, keepable: operatorsOnly && allSettled(stamps.slice(1), nowMs) }
  } catch {
    return undefined
  }
}
