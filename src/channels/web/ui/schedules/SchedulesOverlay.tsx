import { useState } from "preact/hooks"
import { deleteJson } from "../http.js"
import { LoadedView } from "../memory/LoadedView.js"
import { useLoaded } from "../memory/useLoaded.js"
import { Modal } from "../Modal.js"
import { decodeSchedules, type Heartbeat, type Schedule } from "./responses.js"
import { ScheduleForm } from "./ScheduleForm.js"

/** A local ISO time of the server's (`2026-11-30T07:30:00+01:00`) as people read it: `2026-11-30 07:30 +01:00`. */
export const readableTime = (iso: string): string => {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?(.*)$/.exec(iso)
  if (m === null) return iso
  const [, date, minutes, seconds, offset] = m
  return `${date} ${minutes}${seconds === undefined || seconds === ":00" ? "" : seconds}${offset === "" ? "" : ` ${offset}`}`
}

/** A schedule's runs: how many fired, how many were missed and the last missed one's due time. */
const runs = (s: Schedule) => ({
  fired: s.lastFired === null ? `${s.fired}` : `${s.fired} (last ${readableTime(s.lastFired)})`,
  missed: s.lastMissed === null ? `${s.missed}` : `${s.missed} (last due ${readableTime(s.lastMissed)})`
})

/** One schedule: when, its zone, the next run, runs fired and missed, whom it answers; Remove asks first. */
const ScheduleItem = ({ schedule: s, onRemoved }: { readonly schedule: Schedule; readonly onRemoved: () => void }) => {
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const remove = async () => {
    setBusy(true)
    setError(undefined)
    const answer = await deleteJson(`/schedules/${s.id}`)
    setBusy(false)
    // 404: someone else (`kern schedule rm`, the agent) removed it first; either way it is gone.
    if (answer._tag === "Ok" || (answer._tag === "Failed" && answer.status === 404)) return onRemoved()
    setConfirming(false)
    setError(answer._tag === "Failed" ? answer.message : "schedules are not built in this version of kern")
  }
  const { fired, missed } = runs(s)
  const facts: ReadonlyArray<readonly [string, string]> = [
    ["Next run", s.next === null ? "done" : readableTime(s.next)],
    ["Fired", fired],
    ["Missed", missed],
    ["Misfire", s.misfire],
    ["Delivers to", s.deliverTo ?? "the conversation that added it"],
    ["Added by", s.createdBy]
  ]
  return (
    <li class={`schedule${s.next === null ? " schedule-done" : ""}`} aria-label={`Schedule ${s.id}`}>
      <div class="schedule-head">
        <span class="tag schedule-kind-tag">{s.kind === "cron" ? "cron" : "once"}</span>
        {s.kind === "cron"
          ? <code class="schedule-when">{s.when}</code>
          : <time class="schedule-when" dateTime={s.when}>{readableTime(s.when)}</time>}
        <span class="schedule-zone muted">{s.timezone}</span>
        <span class="schedule-id muted">#{s.id}</span>
      </div>
      <p class="schedule-prompt">{s.prompt}</p>
      <dl class="schedule-facts">
        {facts.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {confirming
        ? (
          <div class="schedule-confirm" role="group" aria-label={`Remove schedule ${s.id}?`}>
            <span>Remove schedule {s.id}? It never fires again.</span>
            <button type="button" class="danger" disabled={busy} onClick={() => void remove()}>{busy ? "Removing…" : "Yes, remove"}</button>
            <button type="button" disabled={busy} onClick={() => setConfirming(false)}>Keep it</button>
          </div>
        )
        : <button type="button" aria-label={`Remove schedule ${s.id}`} onClick={() => setConfirming(true)}>Remove…</button>}
      {error !== undefined && <p class="failed" role="alert">Could not remove schedule {s.id}: {error}</p>}
    </li>
  )
}

/** The heartbeat, schedule 0: when it ticks and its next tick; it is turned off in the config, not removed here. */
const HeartbeatItem = ({ heartbeat: h }: { readonly heartbeat: Heartbeat }) => (
  <li class="schedule schedule-heartbeat" aria-label="Heartbeat">
    <div class="schedule-head">
      <span class="tag schedule-kind-tag">heartbeat</span>
      <span class="schedule-when">{h.when}</span>
      <span class="schedule-zone muted">{h.timezone}</span>
      <span class="schedule-id muted">#{h.id}</span>
    </div>
    <p class="schedule-prompt">{h.prompt}</p>
    <dl class="schedule-facts">
      <div>
        <dt>Next run</dt>
        <dd>{h.next === null ? "when the agent runs" : readableTime(h.next)}</dd>
      </div>
    </dl>
    <p class="muted">{h.note}</p>
  </li>
)

/** The Schedules overlay: the heartbeat and every schedule (GET /schedules), and a form that adds one as the operator. */
export const SchedulesOverlay = ({ onClose }: { readonly onClose: () => void }) => {
  const { loaded, reload } = useLoaded("/schedules", decodeSchedules)
  const [said, setSaid] = useState("")
  return (
    <Modal id="schedules" title="Schedules" onClose={onClose}>
      <div class="panel schedules-panel">
        <ScheduleForm
          onAdded={(s) => {
            setSaid(`Added schedule ${s.id}${s.next === null ? "" : `, next run ${readableTime(s.next)}`}.`)
            reload()
          }}
        />
        <p class="muted schedules-said" role="status" aria-live="polite">{said}</p>
        <h3>Schedules</h3>
        <LoadedView loaded={loaded} what="schedules">
          {({ heartbeat, schedules }) =>
            schedules.length === 0 && heartbeat === null
              ? <p class="muted">No schedules yet: add one above, or ask the agent to do something later or regularly.</p>
              : (
                <ul class="schedules" aria-label="Schedules">
                  {heartbeat !== null && <HeartbeatItem heartbeat={heartbeat} />}
                  {schedules.map((s) => (
                    <ScheduleItem
                      key={s.id}
                      schedule={s}
                      onRemoved={() => {
                        setSaid(`Removed schedule ${s.id}.`)
                        reload()
                      }}
                    />
                  ))}
                </ul>
              )}
        </LoadedView>
      </div>
    </Modal>
  )
}
