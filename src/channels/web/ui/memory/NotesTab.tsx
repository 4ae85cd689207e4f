import { useState } from "preact/hooks"
import { type Loaded, mapLoaded, postJson } from "../http.js"
import { Markdown } from "../Markdown.js"
import { LoadedView } from "./LoadedView.js"
import { type Feedback, regenerateFeedback } from "./regenerateFeedback.js"
import { decodeDailyNotes, decodeSummary } from "./responses.js"

type DailyNotesAnswer = NonNullable<ReturnType<typeof decodeDailyNotes>>
import { useLoaded } from "./useLoaded.js"

const clock = () => new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })

/** The latest daily notes, the newest open: what the agent wrote today is here before any summary is. */
const DailyNotes = ({ loaded }: { readonly loaded: Loaded<DailyNotesAnswer> | undefined }) => (
    <section aria-labelledby="daily-notes-title">
      <h3 id="daily-notes-title">Daily notes</h3>
      <LoadedView loaded={loaded} what="daily notes">
        {({ notes, total }) =>
          notes.length === 0 ? <p class="muted">No daily notes yet (the agent writes notes/YYYY-MM-DD.md).</p> : (
            <>
              {notes.map((note, i) => (
                <details key={note.path} class="daily-note" open={i === 0}>
                  <summary>{note.date}</summary>
                  <Markdown text={note.text} />
                </details>
              ))}
              {total > notes.length && <p class="muted">The latest {notes.length} of {total} notes.</p>}
            </>
          )}
      </LoadedView>
    </section>
)

export const NotesTab = () => {
  const { loaded, set } = useLoaded("/notes/summary", decodeSummary)
  const { loaded: daily } = useLoaded("/notes", decodeDailyNotes)
  const [busy, setBusy] = useState(false)
  const [feedback, setFeedback] = useState<Feedback | undefined>(undefined)
  const regenerate = async () => {
    setBusy(true)
    setFeedback(undefined)
    const answer = mapLoaded(await postJson("/notes/summary", {}), decodeSummary)
    setBusy(false)
    setFeedback(regenerateFeedback(answer, daily?._tag === "Ok" ? daily.value.total : undefined, clock()))
    // A failure leaves the summary on screen as it was; the line above says what happened.
    if (answer._tag === "Ok") set(answer)
  }
  return (
    <div class="notes">
      <h3>Summary of the notes before the latest</h3>
      <div class="toolbar">
        <button type="button" onClick={() => void regenerate()} disabled={busy}>{busy ? "Regenerating…" : "Regenerate"}</button>
        <p class={feedback?.failed === true ? "notes-feedback failed" : "notes-feedback muted"} role="status" aria-live="polite">
          {busy ? "Asking the summary model…" : feedback?.text}
        </p>
      </div>
      <LoadedView loaded={loaded} what="notes summary">
        {({ summary }) =>
          summary === null
            ? <p class="muted">No summary yet: it is made once there are two daily notes, from the ones before the latest.</p>
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
      <DailyNotes loaded={daily} />
    </div>
  )
}
