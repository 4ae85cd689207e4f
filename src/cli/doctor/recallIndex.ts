import type { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { LoadedConfig } from "../../config/AgentConfig.js"
import { counted } from "../../config/counted.js"
import { embeddingChoice } from "../../recall/embeddingChoice.js"
import * as RecallStoreForClient from "../../recall/storeForClient.js"
import { type CheckResult, type Finding, problem, resultOf, warning } from "./Check.js"

/** Lines (messages) in `file` from byte `from` on, counted without decoding them: the doctor stays quick on big sessions. */
const linesFrom = (file: string, from: number): number => {
  const fd = NodeFs.openSync(file, "r")
  try {
    const buffer = Buffer.alloc(1 << 16)
    let lines = 0
    let position = from
    for (;;) {
      const read = NodeFs.readSync(fd, buffer, 0, buffer.length, position)
      if (read === 0) return lines
      for (let i = 0; i < read; i++) if (buffer[i] === 0x0a) lines++
      position += read
    }
  } finally {
    NodeFs.closeSync(fd)
  }
}

interface Unindexed {
  readonly sessions: number
  readonly messages: number
}

/** What the session files hold past what recall_sessions says was indexed (a file replaced or cut counts whole). */
const unindexedSessions = (sessionsDir: string, states: ReadonlyMap<string, { dev: string; ino: string; offset: number }>): Unindexed => {
  const names = NodeFs.existsSync(sessionsDir) ? NodeFs.readdirSync(sessionsDir).filter((name) => name.endsWith(".jsonl")) : []
  let sessions = 0
  let messages = 0
  for (const name of names) {
    const path = NodePath.join(sessionsDir, name)
    const stat = NodeFs.statSync(path, { throwIfNoEntry: false })
    if (stat === undefined || !stat.isFile()) continue
    const state = states.get(name.slice(0, -".jsonl".length))
    const same = state !== undefined && state.dev === String(stat.dev) && state.ino === String(stat.ino) && stat.size >= state.offset
    const from = same ? state.offset : 0
    if (stat.size === from) continue
    // From the start, the first line is the session's header, not a message.
    const waiting = Math.max(0, linesFrom(path, from) - (from === 0 ? 1 : 0))
    if (waiting === 0) continue
    sessions++
    messages += waiting
  }
  return { sessions, messages }
}

/**
 * The recall index against the session files: messages not yet indexed, and (with embeddings on) chunks still without
 * a vector. While an agent runs its worker catches up, so what waits is a warning; with none running, a problem.
 */
export const recallCheck = (
  loaded: LoadedConfig,
  running: boolean
): Effect.Effect<CheckResult, { readonly message: string }, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (!loaded.config.recall) return resultOf("recall", [], "recall is off (\"recall\": false)")
    const store = yield* RecallStoreForClient.make
    const states = new Map((yield* store.sessionStates).map((state) => [state.sessionId, state]))
    const unindexed = unindexedSessions(loaded.paths.sessionsDir, states)
    const counts = yield* store.counts
    const chosen = Either.isRight(embeddingChoice(loaded))
    const vectors = chosen && Option.isNone(store.vectorsUnavailable)
    const findings: Array<Finding> = []
    // An embedding model is configured, but the database cannot keep vectors (PostgreSQL without pgvector).
    if (chosen && Option.isSome(store.vectorsUnavailable)) {
      findings.push(warning(store.vectorsUnavailable.value.reason, "install pgvector on the server (CREATE EXTENSION vector), or set \"embeddingModel\": false"))
    }
    const catchUp = running
      ? "nothing to do while the agent runs: it indexes them in the background (if the count does not fall, look at kern logs)"
      : "start the agent (kern start, or kern run): it indexes what is new at once; or rebuild the index: kern recall reindex"
    const level = running ? warning : problem
    if (unindexed.messages > 0) {
      findings.push(level(
        `${counted(unindexed.messages, "message")} in ${counted(unindexed.sessions, "session")} not yet indexed: recall does not find them`,
        catchUp
      ))
    }
    if (vectors && counts.unembedded > 0) {
      findings.push(level(
        `${counted(counts.unembedded, "passage")} of ${counts.chunks} without a vector yet: recall finds them by their words only`,
        catchUp
      ))
    }
    return resultOf(
      "recall",
      findings,
      `every session is indexed (${counted(counts.messages, "message")}, ${counted(counts.chunks, "passage")}${vectors ? ", each with its vector" : ", keywords only"})`
    )
  }).pipe(Effect.mapError((error) => ({ message: `kern.db's recall index could not be read: ${error.message}` })))
