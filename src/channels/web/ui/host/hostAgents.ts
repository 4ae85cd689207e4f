// The hosted agents as `kern serve` lists them (GET /agents, the host page's event stream), decoded for the page.
import { arr, isObject, type Json, parseJson, str } from "../wire.js"

export type HostedState = "passive" | "waking" | "live"

export interface HostedAgent {
  readonly name: string
  readonly state: HostedState
  readonly problem?: string | undefined
}

const states: ReadonlyArray<string> = ["passive", "waking", "live"]

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

/**
 * Opens an agent's UI through the host's hand-over: the host answers with the agent's one-time login, which the page
 * follows (the agent sets its own cookie and shows its page). Asked with fetch, not a form: a form's navigation sends
 * `Origin: null` under `Referrer-Policy: no-referrer`, and the host takes a write only from its own origin.
 * Resolves to why it failed; on success the page is already leaving.
 */
export const openAgent = async (base: "host" | "agent", name: string): Promise<string | undefined> => {
  let response: Response
  try {
    response = await fetch(openAction(base, name), { method: "POST", credentials: "same-origin", headers: { accept: "application/json" } })
  } catch {
    return "the host is not reachable"
  }
  const body = parseJson(await response.text())
  const url = isObject(body) ? str(body, "url") : undefined
  if (!response.ok || url === undefined || !url.startsWith(`/agents/${name}/`)) {
    return (isObject(body) ? str(body, "error") : undefined) ?? `the host answered ${response.status}`
  }
  location.assign(url)
  return undefined
}
