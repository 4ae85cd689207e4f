import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { RecallStoreError, RecallStoreShape } from "./RecallStore.js"

/**
 * After a restore, every session file is a new file (another inode, maybe another device), which the indexer takes for
 * a session rewritten: it would forget what it indexed and read, chunk and embed the whole session again (for a long
 * agent, every embedding paid for twice). A restored file holds at least the lines the restored index read (a backup
 * copies kern.db before the sessions, which only grow), so each one at least as long as its indexed offset keeps its
 * index under its new identity. Returns how many were kept.
 */
export const relocateSessions = (store: RecallStoreShape, sessionsDir: string): Effect.Effect<number, RecallStoreError> =>
  Effect.gen(function*() {
    let kept = 0
    for (const state of yield* store.sessionStates) {
      const stat = NodeFs.statSync(NodePath.join(sessionsDir, `${state.sessionId}.jsonl`), { throwIfNoEntry: false })
      if (stat === undefined || !stat.isFile() || stat.size < state.offset) continue
      if (String(stat.dev) === state.dev && String(stat.ino) === state.ino) continue
      yield* store.relocateSession(state.sessionId, String(stat.dev), String(stat.ino))
      kept++
    }
    return kept
  }).pipe(Effect.withSpan("kern.recall.relocateSessions"))
