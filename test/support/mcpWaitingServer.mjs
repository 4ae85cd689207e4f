// A real MCP server (the official SDK's McpServer over stdio) with one tool, `wait`, for tests of a call's lifetime:
// its timeout, its cancellation, its server's death mid-call.
//
// `wait { ms }` answers `waited <ms>` after `ms` milliseconds. While it waits it reports progress every 20 ms when the
// request asked for progress (a progressToken), as a long tool would. MCP_EVENTS_FILE names a file it appends a line
// to as things happen: `started <request id>`, `cancelled <request id>` (the client sent notifications/cancelled),
// `progress <request id>` (its first progress report), `answered <request id>`. MCP_START_DELAY_MS delays its start (it answers nothing until then).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import * as NodeFs from "node:fs"
import { z } from "zod"

const events = process.env.MCP_EVENTS_FILE
if (events === undefined) {
  process.stderr.write("MCP_EVENTS_FILE is not set\n")
  process.exit(2)
}
const note = (line) => NodeFs.appendFileSync(events, `${line}\n`)

const server = new McpServer({ name: "waiting", version: "1.0.0" })

server.registerTool("wait", {
  description: "Waits, reporting progress, then answers",
  inputSchema: { ms: z.number().describe("how long to wait, in milliseconds") }
}, ({ ms }, extra) =>
  new Promise((resolve) => {
    note(`started ${extra.requestId}`)
    const token = extra._meta?.progressToken
    let progress = 0
    const ticker = token === undefined ? undefined : setInterval(() => {
      if (progress === 0) note(`progress ${extra.requestId}`)
      progress += 1
      extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress } }).catch(() => {})
    }, 20)
    const done = setTimeout(() => {
      clearInterval(ticker)
      note(`answered ${extra.requestId}`)
      resolve({ content: [{ type: "text", text: `waited ${ms}` }] })
    }, ms)
    extra.signal.addEventListener("abort", () => {
      clearInterval(ticker)
      clearTimeout(done)
      note(`cancelled ${extra.requestId}`)
      resolve({ content: [{ type: "text", text: "cancelled" }] })
    })
  }))

process.stdin.on("end", () => process.exit(0))
// MCP_START_DELAY_MS: how long the server takes before it answers anything (a slow start).
const startDelay = Number(process.env.MCP_START_DELAY_MS ?? "0")
if (startDelay > 0) await new Promise((resolve) => setTimeout(resolve, startDelay))
await server.connect(new StdioServerTransport())
process.stderr.write("waiting server ready\n")
