// The hand-over into an agent's UI, from the host page or an agent's picker (a page: it navigates).
import { isObject, parseJson, str } from "../wire.js"
import { openAction } from "./hostAgents.js"

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
