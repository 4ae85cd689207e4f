import * as NodeOs from "node:os"
import { isLoopback } from "./serverSetup.js"

/**
 * What is refused before a request reaches the router or the guard: a request target that is not in canonical form,
 * and a Host this server is not. Both are pure checks of what came on the wire.
 */

/** Characters whose percent-encoding in a path is refused: unreserved ones (they have one spelling) and delimiters. */
const encodedRefused = /%(?:[46][1-9a-f]|[57][0-9a]|3[0-9]|2[de]|5f|7e|2f|5c|3b|3f|23|25|[01][0-9a-f]|7f)/i

/**
 * Why a request target is not in canonical form, or nothing when it is. A path decides who may call and which route
 * answers; a target that a URL parser and a router could read two ways (`/history;/../health` is `/health` to one
 * and `/history` to the other) is refused whole: no `;`, no `.` or `..` segment, no empty segment (`//`, a trailing
 * `/`), no backslash, no percent-encoded dot, slash, backslash or other character that has a plain spelling.
 * The query string is the route's to read.
 */
export const targetProblem = (target: string): string | undefined => {
  if (!target.startsWith("/")) return "it must be a path starting with /"
  if (target.includes("#")) return "it must not carry a fragment (#)"
  const queryAt = target.indexOf("?")
  const path = queryAt === -1 ? target : target.slice(0, queryAt)
  if (path.includes(";")) return "its path must not contain ;"
  if (path.includes("\\")) return "its path must not contain a backslash"
  if (encodedRefused.test(path)) return "its path must not percent-encode a dot, a slash, a backslash or a plain character"
  if (path === "/") return undefined
  const segments = path.slice(1).split("/")
  if (segments.some((segment) => segment === "")) return "its path must not have an empty segment (// or a trailing /)"
  if (segments.some((segment) => segment === "." || segment === "..")) return "its path must not have a . or .. segment"
  return undefined
}

/** The host names a page of this server is reached by: the loopback names, and the configured host. */
export interface HostNames {
  readonly names: ReadonlySet<string>
}

const wildcardHosts: ReadonlySet<string> = new Set(["0.0.0.0", "::", "[::]"])

const bracketed = (host: string): string => host.includes(":") && !host.startsWith("[") ? `[${host}]` : host

/**
 * The names accepted in Host: `127.0.0.1`, `localhost`, `[::1]` and the configured `host`; a wildcard bind (0.0.0.0,
 * ::) adds the machine's own interface addresses, which is how other machines reach it. An IP literal cannot be
 * rebound by DNS; a name is accepted only when it is the configured one.
 */
export const hostNames = (host: string): HostNames => {
  const names = new Set(["127.0.0.1", "localhost", "[::1]", bracketed(host.toLowerCase())])
  if (wildcardHosts.has(host)) {
    for (const addresses of Object.values(NodeOs.networkInterfaces())) {
      for (const address of addresses ?? []) names.add(bracketed(address.address.toLowerCase()))
    }
  }
  return { names }
}

export interface HostRefusal {
  readonly status: 400 | 421
  readonly error: string
}

const hostPattern = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/

/**
 * Whether the request's Host headers (every one sent: Node keeps only the first) name this server. A DNS-rebinding
 * page reaches 127.0.0.1 under its own name, so its requests carry that name: refused with 421. No Host, two, an
 * empty or malformed one: 400.
 */
export const hostRefusal = (allowed: HostNames, values: ReadonlyArray<string>): HostRefusal | undefined => {
  if (values.length !== 1) return { status: 400, error: `a request must carry exactly one Host header (it had ${values.length})` }
  const value = (values[0] ?? "").trim().toLowerCase()
  const match = hostPattern.exec(value)
  if (value === "" || match === null) return { status: 400, error: "the Host header is empty or malformed" }
  const name = match[1] ?? ""
  if (allowed.names.has(name) || isLoopback(name)) return undefined
  return {
    status: 421,
    error: `this server does not answer to the host ${name}: use http://127.0.0.1, http://localhost or the configured "host"`
  }
}

/** Every value of a header, from Node's raw header list (name, value, name, value, …). */
export const headerValues = (rawHeaders: ReadonlyArray<string>, name: string): ReadonlyArray<string> => {
  const values: Array<string> = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === name) values.push(rawHeaders[i + 1] ?? "")
  }
  return values
}
