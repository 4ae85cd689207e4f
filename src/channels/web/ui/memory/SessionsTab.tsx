import { useState } from "preact/hooks"
import { arr, isObject, type Json, num, obj, str } from "../wire.js"
import { Bar, Columns } from "./Bars.js"
import { LoadedView } from "./LoadedView.js"
import { RawMessages } from "./RawMessages.js"
import { useLoaded } from "./useLoaded.js"

interface Session {
  readonly id: string
  readonly createdAt: string
  readonly modifiedAt: string
  readonly messages: number
  readonly bytes: number
  readonly current: boolean
}

const decodeSessions = (u: Json | undefined): ReadonlyArray<Session> | undefined => {
  if (!isObject(u)) return undefined
  const current = str(u, "currentSessionId")
  return arr(u, "sessions").filter(isObject).map((s) => ({
    id: str(s, "id") ?? "?",
    createdAt: str(s, "createdAt") ?? "",
    modifiedAt: str(s, "modifiedAt") ?? "",
    messages: num(s, "messages") ?? 0,
    bytes: num(s, "bytes") ?? 0,
    current: s["current"] === true || str(s, "id") === current
  })).reverse()
}

interface Activity {
  readonly total: number
  readonly roles: { readonly user: number; readonly assistant: number; readonly tool: number }
  readonly daily: ReadonlyArray<{ readonly label: string; readonly count: number }>
  readonly hourly: ReadonlyArray<{ readonly label: string; readonly count: number }>
}

const decodeActivity = (u: Json | undefined): Activity | undefined => {
  if (!isObject(u)) return undefined
  const roles = obj(u, "roles")
  return {
    total: num(u, "total") ?? 0,
    roles: { user: (roles && num(roles, "user")) ?? 0, assistant: (roles && num(roles, "assistant")) ?? 0, tool: (roles && num(roles, "tool")) ?? 0 },
    // The last 30 active days keep the chart readable on a phone.
    daily: arr(u, "daily").filter(isObject).slice(-30).map((d) => ({ label: (str(d, "date") ?? "").slice(5), count: num(d, "count") ?? 0 })),
    hourly: arr(u, "hourly").filter(isObject).map((h) => ({ label: String(num(h, "hour") ?? 0), count: num(h, "count") ?? 0 }))
  }
}

const kb = (bytes: number) => bytes < 1024 ? `${bytes} B` : bytes < 1048576 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1048576).toFixed(1)} MB`

const duration = (from: string, to: string): string => {
  const ms = new Date(to).getTime() - new Date(from).getTime()
  if (!Number.isFinite(ms) || ms < 0) return ""
  const minutes = Math.round(ms / 60000)
  return minutes < 60 ? `${minutes} min` : minutes < 2880 ? `${Math.round(minutes / 60)} h` : `${Math.round(minutes / 1440)} days`
}

const SessionDetail = ({ id }: { readonly id: string }) => {
  const { loaded } = useLoaded(`/sessions/${encodeURIComponent(id)}/activity`, decodeActivity)
  return (
    <div class="session-detail">
      <LoadedView loaded={loaded} what="activity">
        {(a) => (
          <>
            <h4>Roles</h4>
            <dl class="roles">
              {(["user", "assistant", "tool"] as const).map((role) => (
                <div key={role} class="role-row">
                  <dt>{role}</dt>
                  <dd>
                    <Bar value={a.roles[role]} max={a.total} label={`${role}: ${a.roles[role]} of ${a.total}`} /> {a.roles[role]}
                  </dd>
                </div>
              ))}
            </dl>
            <h4>Messages per day</h4>
            <Columns entries={a.daily} label="Messages per day" labelEvery={Math.max(1, Math.ceil(a.daily.length / 8))} />
            <h4>Messages per hour of day</h4>
            <Columns entries={a.hourly} label="Messages per hour of day" labelEvery={3} />
          </>
        )}
      </LoadedView>
      <h4>Messages</h4>
      <RawMessages session={id} />
    </div>
  )
}

export const SessionsTab = () => {
  const { loaded } = useLoaded("/sessions", decodeSessions)
  const [open, setOpen] = useState<string | undefined>(undefined)
  return (
    <LoadedView loaded={loaded} what="sessions">
      {(sessions) => (
        <ul class="sessions">
          {sessions.length === 0 && <li class="muted">No sessions yet.</li>}
          {sessions.map((s) => (
            <li key={s.id} class={s.current ? "session live" : "session"}>
              <button
                type="button"
                class="session-head"
                aria-expanded={open === s.id}
                onClick={() => setOpen(open === s.id ? undefined : s.id)}
              >
                <span class="session-id">{s.id}</span>
                {s.current && <span class="tag live-tag">live</span>}
                <span class="session-meta">
                  {s.messages} messages · {kb(s.bytes)} · {new Date(s.createdAt).toLocaleString()} · {duration(s.createdAt, s.modifiedAt)}
                </span>
              </button>
              {open === s.id && <SessionDetail id={s.id} />}
            </li>
          ))}
        </ul>
      )}
    </LoadedView>
  )
}
