import { Schema } from "effect"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { counted } from "../config/counted.js"

/** What `GET /agents` of a `kern serve` answers (src/host/HostServer.ts agentsBody). */
export const HostAgentsBody = Schema.Struct({
  agents: Schema.Array(Schema.Struct({
    name: Schema.String,
    state: Schema.Literal("passive", "waking", "live", "passivating"),
    problem: Schema.optional(Schema.String)
  }))
})
export type HostAgentsBody = typeof HostAgentsBody.Type

/** What `GET /host` answers. */
export const HostBody = Schema.Struct({
  pid: Schema.Int,
  startedAt: Schema.String,
  uptimeMs: Schema.Number,
  agents: Schema.Struct({ total: Schema.Int, live: Schema.Int, waking: Schema.Int, passive: Schema.Int }),
  rssBytes: Schema.Number
})
export type HostBody = typeof HostBody.Type

/** `kern status --host`: the host as its lock and its own routes tell it. */
export type HostView =
  | { readonly home: string; readonly running: false }
  | {
    readonly home: string
    readonly running: true
    readonly address: string
    readonly host: HostBody
    readonly agents: HostAgentsBody["agents"]
  }

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

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

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

/** The host's problems: each agent whose last wake failed. */
export const hostProblems = (view: HostView): ReadonlyArray<string> =>
  view.running ? view.agents.flatMap((a) => a.problem === undefined ? [] : [`${a.name}: ${a.problem}`]) : []

/** `kern status --host` as text. */
export const hostLines = (view: HostView): ReadonlyArray<string> => {
  if (!view.running) return [`home:      ${view.home}`, "running:   no (no kern serve runs from this home)"]
  const { agents, host } = view
  const width = Math.max(5, ...agents.map((a) => a.name.length))
  const problems = hostProblems(view)
  return [
    `home:      ${view.home}`,
    `running:   pid ${host.pid} since ${host.startedAt}, up ${formatUptime(host.uptimeMs)}`,
    `address:   ${view.address} (each agent under /agents/<name>/)`,
    `memory:    ${mib(host.rssBytes)} RSS`,
    `agents:    ${counted(host.agents.total, "agent")}: ${host.agents.live} live, ${host.agents.waking} waking, ${host.agents.passive} passive`,
    ...agents.map((a) => `  ${a.name.padEnd(width)}  ${a.state}`),
    problems.length === 0 ? "problems:  none" : `problems:\n${problems.map((p) => `  - ${neutralizeControls(p)}`).join("\n")}`
  ]
}
