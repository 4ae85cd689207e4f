import { targetProblem } from "../channels/web/requestGate.js"
import { agentNamePattern } from "./HostConfig.js"

/**
 * The one door of `kern serve`'s server: what a request target is, read once. The whole target must be in the
 * canonical form every kern server demands (requestGate.targetProblem: no `;`, no dot segments, no empty segments, no
 * percent-encoded slash, dot or plain character) before anything is taken off it, so `/agents/a/..%2fb/status` or
 * `/agents/a/;/../b/status` never reads as agent b's route; the only trailing slash let through is an agent's root
 * (`/agents/a/`, where its page's relative links resolve). The name is matched exactly (`A` is not `a`), and the
 * rest goes to that agent's own app, whose gate and guard see it as `kern start`'s server would.
 */
export type Door =
  | { readonly _tag: "Refused"; readonly error: string }
  | { readonly _tag: "Agents" }
  | { readonly _tag: "Host" }
  | { readonly _tag: "Agent"; readonly name: string; readonly target: string }
  | { readonly _tag: "AgentRoot"; readonly name: string }
  /** `/`: the host page; `/assets/…`: its files (the web UI's, which the agents' pages load under their prefix). */
  | { readonly _tag: "HostPage" }
  | { readonly _tag: "HostAsset"; readonly path: string }
  /** The host page's session: `/host/login`, `/host/logout`; its live list: `/host/events`. */
  | { readonly _tag: "HostLogin" }
  | { readonly _tag: "HostLogout" }
  | { readonly _tag: "HostEvents" }
  /** `/host/open/<name>`: a host session opens an agent's UI (hostOpen.ts). */
  | { readonly _tag: "HostOpen"; readonly name: string }
  | { readonly _tag: "NotFound" }

const agentRoot = /^\/agents\/([^/?#]*)\/(\?[^#]*)?$/

export const door = (target: string): Door => {
  const root = agentRoot.exec(target)
  const checked = root === null ? target : `/agents/${root[1] ?? ""}${root[2] ?? ""}`
  const problem = targetProblem(checked)
  if (problem !== undefined) return { _tag: "Refused", error: `the request target is not in canonical form: ${problem}` }
  const queryAt = checked.indexOf("?")
  const path = queryAt === -1 ? checked : checked.slice(0, queryAt)
  const query = queryAt === -1 ? "" : checked.slice(queryAt)
  const segments = path.slice(1).split("/")
  if (segments[0] === "agents") {
    if (segments.length === 1) return { _tag: "Agents" }
    const name = segments[1] ?? ""
    if (!agentNamePattern.test(name)) return { _tag: "NotFound" }
    if (segments.length === 2) return root === null ? { _tag: "AgentRoot", name } : { _tag: "Agent", name, target: `/${query}` }
    return { _tag: "Agent", name, target: `/${segments.slice(2).join("/")}${query}` }
  }
  if (path === "/") return { _tag: "HostPage" }
  if (segments[0] === "assets" && segments.length > 1) return { _tag: "HostAsset", path }
  if (segments[0] === "host") {
    if (segments.length === 1) return { _tag: "Host" }
    if (segments.length === 2 && segments[1] === "login") return { _tag: "HostLogin" }
    if (segments.length === 2 && segments[1] === "logout") return { _tag: "HostLogout" }
    if (segments.length === 2 && segments[1] === "events") return { _tag: "HostEvents" }
    if (segments.length === 3 && segments[1] === "open" && agentNamePattern.test(segments[2] ?? "")) return { _tag: "HostOpen", name: segments[2] ?? "" }
  }
  return { _tag: "NotFound" }
}
