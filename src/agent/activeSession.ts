import { Effect } from "effect"
import { SessionStore } from "../session/SessionStore.js"
import { SessionHistory } from "./SessionHistory.js"
import type { ActiveSession } from "./TurnRunner.js"

/**
 * Opens the newest session for appending (repairing it first, or setting it aside when it is not a session), or
 * starts one. `problems` says what the repair did, for the operator.
 */
export const openActiveSession = (options: { readonly fresh?: boolean } = {}) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    const { loaded, problems, writer } = yield* store.openActive(options)
    const history = yield* SessionHistory.make(loaded.messages)
    const session: ActiveSession = { id: loaded.id, writer, history }
    return { session, problems }
  })
