// The host page's state: logged in or not, the agents' list kept live by the host's event stream.
import { signal } from "@preact/signals"
import { isObject, parseJson, str } from "../wire.js"
import { decodeHostedAgents, type HostedAgent } from "./hostAgents.js"

export type HostView =
  | { readonly _tag: "Checking" }
  | { readonly _tag: "Login"; readonly error?: string | undefined }
  | { readonly _tag: "Agents"; readonly agents: ReadonlyArray<HostedAgent>; readonly stream: "live" | "reconnecting" }
  | { readonly _tag: "Failed"; readonly error: string }

/** How long after the stream failed the page asks again whether it is still logged in. */
const recheckMillis = 3000

const errorOf = async (response: Response): Promise<string> => {
  const body = parseJson(await response.text())
  return (isObject(body) ? str(body, "error") : undefined) ?? `the host answered ${response.status}`
}

/** Made once by host/main.tsx; nothing here lives at module level. */
export const makeHostState = () => {
  const view = signal<HostView>({ _tag: "Checking" })
  let events: EventSource | undefined
  let recheck: ReturnType<typeof setTimeout> | undefined

  const stop = () => {
    events?.close()
    events = undefined
    if (recheck !== undefined) clearTimeout(recheck)
    recheck = undefined
  }

  /** The list once (GET agents): it tells whether the browser has a host session; then the live stream. */
  const load = async (): Promise<void> => {
    stop()
    let response: Response
    try {
      response = await fetch("agents", { credentials: "same-origin", headers: { accept: "application/json" } })
    } catch {
      view.value = { _tag: "Failed", error: "the host is not reachable" }
      recheck = setTimeout(() => void load(), recheckMillis)
      return
    }
    if (response.status === 401) {
      view.value = { _tag: "Login" }
      return
    }
    if (!response.ok) {
      view.value = { _tag: "Failed", error: await errorOf(response) }
      return
    }
    const agents = decodeHostedAgents(parseJson(await response.text()))
    if (agents === undefined) {
      view.value = { _tag: "Failed", error: "the host's answer has an unexpected shape" }
      return
    }
    view.value = { _tag: "Agents", agents, stream: "live" }
    follow()
  }

  const follow = () => {
    const source = new EventSource("host/events")
    events = source
    source.addEventListener("agents", (event) => {
      const agents = decodeHostedAgents(parseJson((event as MessageEvent<string>).data))
      if (agents !== undefined) view.value = { _tag: "Agents", agents, stream: "live" }
    })
    // The stream closed for good (a logout elsewhere, the host restarted): ask again whether the session holds.
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) {
        if (view.value._tag === "Agents") view.value = { ...view.value, stream: "reconnecting" }
        return
      }
      source.close()
      recheck = setTimeout(() => void load(), recheckMillis)
    }
  }

  /** The host token, sent once as a bearer; the session is the cookie the answer sets (HttpOnly: the page never holds it). */
  const login = async (token: string): Promise<void> => {
    let response: Response
    try {
      response = await fetch("host/login", { method: "POST", credentials: "same-origin", headers: { authorization: `Bearer ${token}` } })
    } catch {
      view.value = { _tag: "Login", error: "the host is not reachable" }
      return
    }
    if (!response.ok) {
      view.value = { _tag: "Login", error: response.status === 401 ? "wrong token" : await errorOf(response) }
      return
    }
    await load()
  }

  const logout = async (): Promise<void> => {
    stop()
    await fetch("host/logout", { method: "POST", credentials: "same-origin" }).catch(() => undefined)
    view.value = { _tag: "Login" }
  }

  return { view, load, login, logout, stop } as const
}

export type HostState = ReturnType<typeof makeHostState>
