import { Schema } from "effect"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { counted } from "../config/counted.js"
import { formatUptime } from "../channels/hostedLine.js"

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

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

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
