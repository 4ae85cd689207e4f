import { Effect, Option, Ref } from "effect"
import { SessionStore } from "../session/SessionStore.js"
import type { ActiveSession } from "./TurnRunner.js"

/**
 * Opens the newest session for appending (repairing it first), or starts one. `problems` says what the repair did,
 * for the operator.
 */
export const openActiveSession = (options: { readonly fresh?: boolean } = {}) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    const active = options.fresh === true ? Option.none<string>() : yield* store.activeId
    const id = Option.isSome(active) ? active.value : yield* store.create
    const { loaded, writer } = yield* store.open(id)
    const messages = yield* Ref.make(loaded.messages)
    const session: ActiveSession = { id, writer, messages }
    return { session, problems: loaded.problems }
  })
