import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import * as NodeFs from "node:fs"
import type { AddressInfo } from "node:net"
import * as NodePath from "node:path"
import type { AgentEvent, AgentEventInput, HistoryItem } from "../../src/channels/web/api.js"
import { sseEventName } from "../../src/channels/web/sseEventName.js"
import { testDist } from "./build.js"

/**
 * A stand-in for kern's HTTP server that serves the built web UI (dist/web) and canned answers shaped by api.ts:
 * cookie login through a one-time ticket, an SSE stream with sequence ids and Last-Event-ID replay, and routes the
 * test scripts. It drives the UI through states the real agent reaches only by chance (a dropped stream mid-reply,
 * a long history to page); the end-to-end test drives the real server.
 */
export interface WebUiFixture {
  readonly url: string
  readonly ticket: string
  /** Another one-time login ticket (a second page logs in with its own). */
  readonly newTicket: () => string
  /** Numbers, stamps and sends an event to every open stream (and keeps it for replay). */
  readonly emit: (event: AgentEventInput) => AgentEvent
  /** Cuts every open stream without a goodbye, as a network drop does. */
  readonly dropStreams: () => void
  readonly openStreams: () => number
  /** The Last-Event-ID headers the streams were opened with, in order. */
  readonly lastEventIds: ReadonlyArray<string | undefined>
  readonly posted: ReadonlyArray<unknown>
  /** Every API request: method, path with query, and its Origin header. */
  readonly requests: ReadonlyArray<{ readonly method: string; readonly url: string; readonly origin: string | undefined }>
  readonly close: () => Promise<void>
}

export interface FixtureRoutes {
  /** Messages of the current session, oldest first. */
  readonly history: ReadonlyArray<HistoryItem["message"]>
  /** Messages of other sessions by id, oldest first (`/history?session=`). */
  readonly sessions?: Readonly<Record<string, ReadonlyArray<HistoryItem["message"]>>>
  /** JSON answers by path (without the query), with their status (200 unless given); read at each request. */
  readonly json: Readonly<Record<string, { readonly status?: number; readonly body: unknown }>>
  /** Called on POST /message with the turn id it answered. */
  readonly onMessage?: (text: string, turnId: string) => void
}

const webRoot = NodePath.join(testDist, "web")
const types: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml" }
const csp = "default-src 'self'; frame-ancestors 'none'"

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let body = ""
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
    req.on("end", () => resolve(body))
  })

export const startWebUiFixture = async (routes: FixtureRoutes): Promise<WebUiFixture> => {
  const ticket = "ticket-1"
  const cookie = "kern_session=fixture"
  const tickets = new Set([ticket])
  const events: Array<AgentEvent> = []
  const streams = new Set<ServerResponse>()
  const lastEventIds: Array<string | undefined> = []
  const posted: Array<unknown> = []
  const requests: Array<{ readonly method: string; readonly url: string; readonly origin: string | undefined }> = []
  let turns = 0

  // Named as the server names them (a turn's error is `turn-error`, never `error`).
  const send = (res: ServerResponse, event: AgentEvent) =>
    res.write(`id: ${event.seq}\nevent: ${sseEventName(event.type)}\ndata: ${JSON.stringify(event)}\n\n`)

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://fixture")
    const path = url.pathname
    if (path === "/auth") {
      const given = url.searchParams.get("ticket") ?? ""
      if (!tickets.delete(given)) return json(res, 401, { error: "bad ticket" })
      res.writeHead(303, { location: "/", "set-cookie": `${cookie}; HttpOnly; SameSite=Strict; Path=/` })
      return res.end()
    }
    if (path === "/" || path.startsWith("/assets/")) {
      const file = NodePath.join(webRoot, path === "/" ? "index.html" : path)
      if (!file.startsWith(webRoot) || !NodeFs.existsSync(file)) return json(res, 404, { error: "not found" })
      res.writeHead(200, { "content-type": types[NodePath.extname(file)] ?? "application/octet-stream", "content-security-policy": csp })
      return res.end(NodeFs.readFileSync(file))
    }
    if (!(req.headers.cookie ?? "").includes(cookie)) return json(res, 401, { error: "not logged in" })
    requests.push({ method: req.method ?? "GET", url: req.url ?? "/", origin: req.headers.origin })
    if (path === "/events") {
      const last = req.headers["last-event-id"]
      lastEventIds.push(typeof last === "string" ? last : undefined)
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" })
      res.write(": hello\n\n")
      const from = typeof last === "string" ? Number(last) : Infinity
      for (const event of events) if (event.seq > from) send(res, event)
      streams.add(res)
      req.on("close", () => streams.delete(res))
      return
    }
    if (path === "/message" && req.method === "POST") {
      const body: unknown = JSON.parse(await readBody(req))
      posted.push(body)
      const turnId = `turn-${++turns}`
      json(res, 202, { turnId })
      const text = typeof body === "object" && body !== null && "text" in body ? String(body.text) : ""
      routes.onMessage?.(text, turnId)
      return
    }
    if (path === "/history") {
      const sessionId = url.searchParams.get("session") ?? "s-current"
      const messages = routes.sessions?.[sessionId] ?? routes.history
      const limit = Number(url.searchParams.get("limit") ?? 50)
      const before = Number(url.searchParams.get("before") ?? messages.length)
      const start = Math.max(0, before - limit)
      return json(res, 200, {
        sessionId,
        messages: messages.slice(start, before).map((message, i) => ({ index: start + i, message })),
        total: messages.length,
        nextBefore: start === 0 ? null : start
      })
    }
    const canned = routes.json[path]
    if (canned !== undefined) return json(res, canned.status ?? 200, canned.body)
    return json(res, 404, { error: "not found" })
  }

  const server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    ticket,
    newTicket: () => {
      const next = `ticket-${tickets.size + 2}-${Date.now()}`
      tickets.add(next)
      return next
    },
    emit: (input) => {
      const event: AgentEvent = { ...input, seq: events.length + 1, at: new Date().toISOString() }
      events.push(event)
      for (const res of streams) send(res, event)
      return event
    },
    dropStreams: () => {
      for (const res of streams) res.socket?.destroy()
      streams.clear()
    },
    openStreams: () => streams.size,
    lastEventIds,
    posted,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
