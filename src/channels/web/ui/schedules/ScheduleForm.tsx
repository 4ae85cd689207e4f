import { useEffect, useRef, useState } from "preact/hooks"
import { postJson } from "../http.js"
import type { JsonObject } from "../wire.js"
import { decodeAdded, type Schedule } from "./responses.js"

type Kind = Schedule["kind"]

const whenHelp: Record<Kind, { readonly label: string; readonly placeholder: string; readonly hint: string }> = {
  at: {
    label: "At",
    placeholder: "in 3 days at 09:00",
    hint: "An ISO time (2026-12-01T09:00, in the zone below), in 20 minutes, in 2 hours, tomorrow at 8:30, today at 17:00, at 17:00."
  },
  cron: { label: "Cron", placeholder: "0 9 * * 1-5", hint: "minute hour day-of-month month day-of-week, in the zone below." }
}

/** POST /schedules's body: the fields left empty are left out, so the server's defaults apply. */
const requestOf = (fields: Record<string, string>): JsonObject =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.trim()]).filter(([, v]) => v !== ""))

/**
 * Adds a schedule as the operator: at a time or on a cron expression, the prompt, and optionally its zone, misfire
 * policy and the paired user it answers. What the server refuses is shown as it says it; the fields stay as typed.
 */
export const ScheduleForm = ({ onAdded }: { readonly onAdded: (schedule: Schedule) => void }) => {
  const [kind, setKind] = useState<Kind>("at")
  const [when, setWhen] = useState("")
  const [prompt, setPrompt] = useState("")
  const [timezone, setTimezone] = useState("")
  const [misfire, setMisfire] = useState("")
  const [deliverTo, setDeliverTo] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const promptField = useRef<HTMLTextAreaElement>(null)

  useEffect(() => {
    promptField.current?.focus()
  }, [])

  const submit = async () => {
    setBusy(true)
    setError(undefined)
    const answer = await postJson("/schedules", requestOf({ prompt, [kind]: when, timezone, misfire, deliverTo }))
    setBusy(false)
    if (answer._tag === "Failed") return setError(answer.message)
    if (answer._tag === "NotBuilt") return setError("schedules are not built in this version of kern")
    const added = decodeAdded(answer.value)
    if (added === undefined) return setError("the server's answer has an unexpected shape")
    setWhen("")
    setPrompt("")
    onAdded(added)
  }

  const help = whenHelp[kind]
  return (
    <form
      class="schedule-form"
      aria-label="Add a schedule"
      onSubmit={(e) => {
        e.preventDefault()
        void submit()
      }}
    >
      <h3>Add a schedule</h3>
      <fieldset class="schedule-kind">
        <legend>Runs</legend>
        <label>
          <input type="radio" name="schedule-kind" checked={kind === "at"} onChange={() => setKind("at")} /> once, at a time
        </label>
        <label>
          <input type="radio" name="schedule-kind" checked={kind === "cron"} onChange={() => setKind("cron")} /> on a cron schedule
        </label>
      </fieldset>
      <label class="field">
        <span>{help.label}</span>
        <input
          type="text"
          required
          value={when}
          placeholder={help.placeholder}
          aria-describedby="schedule-when-hint"
          onInput={(e) => setWhen(e.currentTarget.value)}
        />
      </label>
      <p id="schedule-when-hint" class="field-hint muted">{help.hint}</p>
      <label class="field">
        <span>Prompt</span>
        <textarea
          ref={promptField}
          required
          rows={3}
          value={prompt}
          placeholder="What the agent is to do when it fires"
          onInput={(e) => setPrompt(e.currentTarget.value)}
        />
      </label>
      <div class="field-row">
        <label class="field">
          <span>Timezone</span>
          <input type="text" value={timezone} placeholder="the agent's, else UTC" onInput={(e) => setTimezone(e.currentTarget.value)} />
        </label>
        <label class="field">
          <span>Misfire</span>
          <select value={misfire} onChange={(e) => setMisfire(e.currentTarget.value)}>
            <option value="">default ({kind === "at" ? "once" : "skip"})</option>
            <option value="skip">skip: record missed runs</option>
            <option value="once">once: one late run for them all</option>
            <option value="all">all: each one late</option>
          </select>
        </label>
        <label class="field">
          <span>Deliver to</span>
          <input type="text" value={deliverTo} placeholder="telegram:42 (optional)" onInput={(e) => setDeliverTo(e.currentTarget.value)} />
        </label>
      </div>
      <div class="toolbar">
        <button type="submit" disabled={busy}>{busy ? "Adding…" : "Add schedule"}</button>
        {error !== undefined && <p class="failed schedule-error" role="alert">{error}</p>}
      </div>
    </form>
  )
}
