// The lines of `kern status` that are more than a field (src/channels/web/statusReport.ts): each chat channel's state,
// the heartbeat, the schedules, kern.db's size.
import { Option } from "effect"
import type { heartbeatStatus } from "../../runtime/HeartbeatLog.js"
import { chatChannelTokens } from "../../tools/Channels.js"

export interface ChannelState {
  readonly interface: string
  readonly state: "connecting" | "connected" | "reconnecting" | "stopped" | "off"
  readonly detail: string
  readonly since: string | null
}

/**
 * Each chat channel: off without its tokens or while the agent is not running; otherwise as the running agent
 * reports it (connected, reconnecting with the reason, stopped with the reason).
 */
export const channelStates = (
  env: Readonly<Record<string, string>>,
  live: Option.Option<ReadonlyArray<{ readonly interface: string; readonly state: ChannelState["state"]; readonly detail: string; readonly since: string }>>
): ReadonlyArray<ChannelState> =>
  Object.entries(chatChannelTokens).map(([iface, tokens]): ChannelState => {
    const missing = tokens.filter((name) => (env[name] ?? "") === "")
    if (missing.length > 0) return { interface: iface, state: "off", detail: `${missing.join(" and ")} not set`, since: null }
    if (Option.isNone(live)) return { interface: iface, state: "off", detail: "the agent is not running", since: null }
    const reported = live.value.find((channel) => channel.interface === iface)
    return reported === undefined
      ? { interface: iface, state: "off", detail: "the running agent did not start it (restart it to pick up new tokens)", since: null }
      : { interface: iface, state: reported.state, detail: reported.detail, since: reported.since }
  })

export const channelLine = (channel: ChannelState): string =>
  `${channel.state}${channel.detail === "" ? "" : ` (${channel.detail})`}${channel.since === null ? "" : ` since ${channel.since}`}`

export const heartbeatLine = (heartbeat: ReturnType<typeof heartbeatStatus>): string => {
  if (heartbeat.intervalMinutes === 0) return "off (heartbeatInterval 0)"
  const every = `every ${heartbeat.intervalMinutes} min${heartbeat.activeHours === null ? "" : ` within ${heartbeat.activeHours}`}`
  const last = heartbeat.last === null
    ? "none yet"
    : `${heartbeat.last.at} ${heartbeat.last.outcome}${heartbeat.last.reason === "" ? "" : ` (${heartbeat.last.reason})`}`
  const next = heartbeat.next ?? "when the agent runs (kern run)"
  return `${every}; last ${last}; next ${next}`
}

export const scheduleLine = (s: { readonly count: number; readonly active: number; readonly missed: number; readonly lastMissed: string | null }) =>
  `${s.count} (${s.active} active)` +
  (s.missed === 0 ? "" : `; ${s.missed} run${s.missed === 1 ? "" : "s"} missed while the agent was down, the last due ${s.lastMissed} (kern schedule list)`)

export const formatBytes = (bytes: number): string =>
  bytes === 0
    ? "none yet"
    : bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
    ? `${(bytes / 1024).toFixed(1)} KiB`
    : `${(bytes / 1024 / 1024).toFixed(1)} MiB`
