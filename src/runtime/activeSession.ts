import { Effect } from "effect"
import { ContextWindow } from "../context/ContextWindow.js"
import { SessionStore } from "../session/SessionStore.js"
import type { ActiveSession } from "../turn/TurnRunner.js"

/**
 * Opens the newest session of a conversation (the operator's unless named) for appending (repairing it first, or setting it aside when it is not a session), or
 * starts one. Only the messages from its context cut on are read and held. `problems` says what the repair did,
 * for the operator.
 */
export const openActiveSession = (
  options: {
    readonly fresh?: boolean
    readonly conversation?: string
    /**
     * Nothing in this process catches the summaries up (a one-shot `kern chat`): a session far behind them is read
     * from its raw window only (ContextWindow.rawCutOf).
     */
    readonly oneShot?: boolean
  } = {}
) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    const context = yield* ContextWindow
    const { loaded, problems, writer } = yield* store.openActive({
      fresh: options.fresh === true,
      conversation: options.conversation,
      cutOf: options.oneShot === true ? context.rawCutOf : context.cutOf
    })
    const history = yield* context.historyOf(loaded)
    const session: ActiveSession = { id: loaded.id, writer, history }
    return { session, problems }
  })
