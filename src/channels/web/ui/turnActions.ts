// The Stop and New conversation actions of the header (TurnControls.tsx): pure where it can be.
import type { ChatState } from "./chatState.js"
import { postJson } from "./http.js"
import type { Store } from "./store.js"

/** The turns on screen that are still running (thinking or streaming). */
export const runningTurnIds = (state: ChatState): ReadonlyArray<string> =>
  state.items.flatMap((item) =>
    item.kind === "assistant" && item.turnId !== undefined && (item.status === "thinking" || item.status === "streaming")
      ? [item.turnId]
      : []
  )

/**
 * Stops the running turns (POST /turns/:turnId/stop): each ends as Stopped, what it said kept, its error shown by
 * the event stream. A turn that ended meanwhile (404) needs nothing more. Undefined, or what went wrong.
 */
export const stopTurns = async (turnIds: ReadonlyArray<string>): Promise<string | undefined> => {
  for (const turnId of turnIds) {
    const answered = await postJson(`/turns/${encodeURIComponent(turnId)}/stop`, {})
    if (answered._tag === "Failed" && answered.status !== 404) return answered.message
    if (answered._tag === "NotBuilt") return "Stopping a turn is not built in this server yet."
  }
  return undefined
}

/**
 * A new conversation (POST /sessions): the next message starts a new session, and the view is cleared. The events
 * seen so far stay seen (their seq), so a reconnect's replay does not bring the old conversation back.
 */
export const newConversation = async (store: Store): Promise<string | undefined> => {
  const created = await postJson("/sessions", {})
  if (created._tag === "Ok") {
    store.chat.value = { items: [], lastSeq: store.chat.value.lastSeq, stale: false }
    store.before.value = undefined
    return undefined
  }
  return created._tag === "NotBuilt" ? "New conversations are not built in this server yet." : created.message
}
