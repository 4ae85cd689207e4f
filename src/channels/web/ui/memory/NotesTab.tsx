import { useState } from "preact/hooks"
import { postJson } from "../http.js"
import { Markdown } from "../Markdown.js"
import { LoadedView } from "./LoadedView.js"
import { decodeSummary } from "./responses.js"
import { useLoaded } from "./useLoaded.js"

export const NotesTab = () => {
  const { loaded, set } = useLoaded("/notes/summary", decodeSummary)
  const [busy, setBusy] = useState(false)
  const regenerate = async () => {
    setBusy(true)
    const answer = await postJson("/notes/summary", {})
    setBusy(false)
    if (answer._tag === "Ok") {
      const decoded = decodeSummary(answer.value)
      set(decoded === undefined ? { _tag: "Failed", status: 200, message: "unexpected answer" } : { _tag: "Ok", value: decoded })
    } else {
      set(answer)
    }
  }
  return (
    <div class="notes">
      <div class="toolbar">
        <button type="button" onClick={() => void regenerate()} disabled={busy}>{busy ? "Regenerating…" : "Regenerate"}</button>
      </div>
      <LoadedView loaded={loaded} what="notes summary">
        {({ summary }) =>
          summary === null
            ? <p class="muted">No notes summary yet: it is made once there are two daily notes.</p>
            : (
              <>
                <p class="muted">
                  From {summary.sources.length === 0 ? "no notes" : summary.sources.join(", ")}
                  {summary.fresh ? "" : " (older than the latest notes)"}
                </p>
                <Markdown text={summary.text} class="summary" />
              </>
            )}
      </LoadedView>
    </div>
  )
}
