// Same-origin requests: the session cookie authenticates them, and the server checks Origin on POST.
import { isObject, type Json, parseJson, str } from "./wire.js"

export type Loaded<A> =
  | { readonly _tag: "Ok"; readonly value: A }
  /** The route answered 501: the feature has not landed in this build. */
  | { readonly _tag: "NotBuilt"; readonly feature: string }
  | { readonly _tag: "Failed"; readonly status: number; readonly message: string }

const failed = (status: number, message: string): Loaded<never> => ({ _tag: "Failed", status, message })

const errorMessage = (status: number, body: Json | undefined): string => {
  if (status === 401) return "Not logged in (or the agent restarted): run `kern open` and follow the link it prints."
  const named = isObject(body) ? (str(body, "message") ?? str(body, "error")) : undefined
  return named === undefined ? `the server answered ${status}` : `${named} (${status})`
}

/**
 * A route's path as the page's base sees it: `/status` is `./status`, so the UI served at `/` (kern run, kern start)
 * asks `/status`, and served under `/agents/<name>/` (kern serve) asks `/agents/<name>/status`.
 */
export const at = (path: string): string => (path.startsWith("/") ? `.${path}` : path)

export const request = async (path: string, init?: RequestInit): Promise<Loaded<Json | undefined>> => {
  let response: Response
  try {
    response = await fetch(at(path), { credentials: "same-origin", ...init })
  } catch {
    return failed(0, "the agent is not reachable")
  }
  const text = await response.text()
  const body = text.length === 0 ? undefined : parseJson(text)
  if (response.status === 501) {
    return { _tag: "NotBuilt", feature: (isObject(body) && str(body, "feature")) || path }
  }
  if (!response.ok) return failed(response.status, errorMessage(response.status, body))
  return { _tag: "Ok", value: body }
}

export const getJson = (path: string) => request(path, { headers: { accept: "application/json" } })

export const postJson = (path: string, body: Json) =>
  request(path, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body)
  })

export const deleteJson = (path: string) => request(path, { method: "DELETE", headers: { accept: "application/json" } })

/** Decodes an Ok answer with `decode`; an answer that does not decode is a failure that says so. */
export const mapLoaded = <A>(loaded: Loaded<Json | undefined>, decode: (u: Json | undefined) => A | undefined): Loaded<A> => {
  if (loaded._tag !== "Ok") return loaded
  const value = decode(loaded.value)
  return value === undefined ? failed(200, "the server's answer has an unexpected shape") : { _tag: "Ok", value }
}

export const query = (params: Record<string, string | number | undefined>): string => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value))
  const s = search.toString()
  return s.length === 0 ? "" : `?${s}`
}
