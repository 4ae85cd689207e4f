import { useState } from "preact/hooks"
import type { Store } from "./store.js"
import { newConversation, runningTurnIds, stopTurns } from "./turnActions.js"

/** The header's Stop (while a turn runs) and New conversation buttons; a failure is said in the page's problem line. */
export const TurnControls = ({ store }: { readonly store: Store }) => {
  const [busy, setBusy] = useState(false)
  const running = runningTurnIds(store.chat.value)
  const act = async (action: () => Promise<string | undefined>) => {
    setBusy(true)
    const failed = await action()
    setBusy(false)
    if (failed !== undefined) store.problem.value = failed
  }
  return (
    <>
      {running.length > 0 && (
        <button type="button" class="stop" disabled={busy} onClick={() => void act(() => stopTurns(running))} title="Stop the running turn (what it said so far is kept)">
          Stop
        </button>
      )}
      <button type="button" class="new-conversation" disabled={busy} onClick={() => void act(() => newConversation(store))} title="Start a new session: the agent starts from a clean context">
        New conversation
      </button>
    </>
  )
}
