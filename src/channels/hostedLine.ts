// The `hosted:` line of `kern status DIR` and the uptime as status words it, apart from the host's own status
// (src/cli/hostStatusFormat.ts): the status report (src/channels/web/statusReport.ts), which the agent renders too, uses them.

/** `kern status DIR` of a hosted agent: its host, and its state there. */
export interface HostedView {
  readonly name: string
  readonly home: string
  /** The host's process while it runs. */
  readonly host: { readonly pid: number; readonly address: string; readonly since: string } | null
  /** As the host says (`GET /agents`); null while the host does not run. */
  readonly state: "passive" | "waking" | "live" | "passivating" | null
  /** Why the host's last wake of it failed. */
  readonly problem: string | null
}

export const formatUptime = (ms: number): string => {
  const s = Math.floor(ms / 1000)
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

const stateWords = {
  passive: "passive (asleep: no process of its own; a message, its web UI or a schedule wakes it)",
  waking: "waking",
  live: "live",
  passivating: "passivating (going to sleep: its scope is closing)"
} as const

/** The `hosted:` line of `kern status DIR`. */
export const hostedLine = (view: HostedView): string =>
  view.host === null
    ? `as ${view.name} by the kern serve of ${view.home}, which is not running (it wakes the agent once it runs)`
    : `as ${view.name} by kern serve pid ${view.host.pid} at ${view.host.address}/agents/${view.name}/ (home ${view.home}): ${
      view.state === null ? "state unknown (the host did not say)" : stateWords[view.state]
    }`

