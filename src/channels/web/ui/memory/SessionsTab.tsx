import { useState } from "preact/hooks"
import { Bar, Columns } from "./Bars.js"
import { LoadedView } from "./LoadedView.js"
import { RawMessages } from "./RawMessages.js"
import { personText } from "../../../../users/conversationLabels.js"
import { byConversation, type ConversationGroup, decodeActivity, decodeSessions, type MessageRange } from "./responses.js"
import { useLoaded } from "./useLoaded.js"

const kb = (bytes: number) => bytes < 1024 ? `${bytes} B` : bytes < 1048576 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1048576).toFixed(1)} MB`

const duration = (from: string, to: string): string => {
  const ms = new Date(to).getTime() - new Date(from).getTime()
  if (!Number.isFinite(ms) || ms < 0) return ""
  const minutes = Math.round(ms / 60000)
  return minutes < 60 ? `${minutes} min` : minutes < 2880 ? `${Math.round(minutes / 60)} h` : `${Math.round(minutes / 1440)} days`
}

/** Messages shown after a recall hit's last one, when the tab opens at it. */
const afterHit = 3

const SessionDetail = ({ id, target }: { readonly id: string; readonly target: MessageRange | undefined }) => {
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
      {target === undefined
        ? <RawMessages session={id} />
        : <RawMessages session={id} before={target.end + 1 + afterHit} highlight={target} />}
    </div>
  )
}

/** A conversation as the operator reads it: `operator · main`, `Alice (telegram:555) · telegram DM`, `telegram group -100…`. */
const conversationTitle = (group: ConversationGroup) =>
  group.person === null ? group.channel : `${personText(group.person)} · ${group.channel}`

/**
 * Every conversation's sessions (the operator sees them all), grouped under whom and where each conversation is.
 * `target`: a recall hit's messages, opened from the Recall tab: its session opens there, around them.
 */
export const SessionsTab = ({ target }: { readonly target?: MessageRange | undefined }) => {
  const { loaded } = useLoaded("/sessions", decodeSessions)
  const [open, setOpen] = useState<string | undefined>(target?.session)
  return (
    <LoadedView loaded={loaded} what="sessions">
      {(sessions) => (
        <div class="conversations">
          {sessions.length === 0 && <p class="muted">No sessions yet.</p>}
          {byConversation(sessions).map((group) => (
            <section key={group.conversation} class="conversation" aria-label={conversationTitle(group)}>
              <h4 class="conversation-head">
                {group.person !== null && <span class="conversation-person">{personText(group.person)}</span>}
                <span class="tag conversation-channel">{group.channel}</span>
              </h4>
              <ul class="sessions">
                {group.sessions.map((s) => (
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
                    {open === s.id && <SessionDetail id={s.id} target={target?.session === s.id ? target : undefined} />}
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </div>
      )}
    </LoadedView>
  )
}
