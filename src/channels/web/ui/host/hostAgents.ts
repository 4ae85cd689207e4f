// The hosted agents as `kern serve` lists them (GET /agents, the host page's event stream), decoded for the page.
import { arr, isObject, type Json, str } from "../wire.js"

export type HostedState = "passive" | "waking" | "live" | "passivating"

export interface HostedAgent {
  readonly name: string
  readonly state: HostedState
  readonly problem?: string | undefined
}

const states: ReadonlyArray<string> = ["passive", "waking", "live", "passivating"]

/** The list, or undefined when the answer is not one; an entry that does not decode is left out. */
export const decodeHostedAgents = (u: Json | undefined): ReadonlyArray<HostedAgent> | undefined => {
  if (!isObject(u) || !Array.isArray(u["agents"])) return undefined
  return arr(u, "agents").flatMap((entry) => {
    if (!isObject(entry)) return []
    const name = str(entry, "name")
    const state = str(entry, "state")
    if (name === undefined || state === undefined || !states.includes(state)) return []
    return [{ name, state: state as HostedState, problem: str(entry, "problem") }]
  })
}

/** The agent a page under `kern serve` belongs to (`/agents/<name>/`), or undefined (a page of `kern start`). */
export const hostedName = (pathname: string): string | undefined =>
  /^\/agents\/([a-z0-9][a-z0-9-]{0,62})\/$/.exec(pathname)?.[1]

/** Where the hand-over into an agent's UI is posted, relative to a page at `base` (the host page, or an agent's). */
export const openAction = (base: "host" | "agent", name: string): string =>
  `${base === "host" ? "" : "../../"}host/open/${encodeURIComponent(name)}`
