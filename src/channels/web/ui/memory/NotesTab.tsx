import { useState } from "preact/hooks"
import { postJson } from "../http.js"
import { Markdown } from "../Markdown.js"
import { arr, isObject, type Json, obj, str } from "../wire.js"
import { LoadedView } from "./LoadedView.js"
import { useLoaded } from "./useLoaded.js"

interface Summary {
  readonly text: string
  readonly sources: ReadonlyArray<string>
  readonly fresh: boolean
}

/** `{ summary: null }` is a valid answer (nothing summarized yet): it decodes to null, not to a failure. */
const decodeSummary = (u: Json | undefined): { readonly summary: Summary | null } | undefined => {
  if (!isObject(u) || !("summary" in u)) return undefined
  const s = obj(u, "summary")
  if (s === undefined) return { summary: null }
  return {
    summary: {
      text: str(s, "text") ?? "",
      sources: arr(s, "sources").filter((x): x is string => typeof x === "string"),
      fresh: s["fresh"] === true
    }
  }
}

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
