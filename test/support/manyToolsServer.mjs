// An MCP server with many tools (120 by default, or argv[2]), each with a real input schema: written with the
// official SDK's server classes and run as a child process, so kern's client meets a real server with a catalogue
// too big to send whole. A call answers with its tool's name and arguments.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

const count = Number(process.argv[2] ?? 120)
const things = [
  "invoice", "customer", "shipment", "ticket", "order", "product", "warehouse", "supplier", "refund", "payment",
  "contract", "employee", "project", "milestone", "calendar", "document", "report", "alert", "webhook", "forecast"
]
const verbs = [
  ["get", "Fetch one {thing} by its id, with every field the ledger keeps for it.", true],
  ["list", "List {thing}s page by page, newest first, filtered by status and date range.", true],
  ["search", "Search {thing}s by free text over their names, notes and tags.", true],
  ["create", "Create a {thing} from the fields given; returns the new id.", false],
  ["update", "Change fields of an existing {thing}; fields left out stay as they are.", false],
  ["archive", "Archive a {thing} so it no longer shows in lists; it can be restored for 30 days.", false]
]

const server = new McpServer({ name: "many-tools", version: "1.0.0" })
let made = 0
for (const [verb, template, readOnly] of verbs) {
  for (const thing of things) {
    if (made >= count) break
    made++
    const name = `${verb}_${thing}`
    server.registerTool(name, {
      description: template.replaceAll("{thing}", thing),
      inputSchema: {
        id: z.string().describe(`The ${thing}'s id, as returned by list_${thing} or search_${thing}`),
        status: z.enum(["open", "pending", "closed", "archived"]).optional().describe(`Only ${thing}s in this status`),
        from: z.string().optional().describe("Earliest date to include, YYYY-MM-DD"),
        to: z.string().optional().describe("Latest date to include, YYYY-MM-DD"),
        limit: z.number().int().min(1).max(100).optional().describe("Most results per page (default 20)"),
        fields: z.array(z.string()).optional().describe(`Which of the ${thing}'s fields to return (default all)`)
      },
      annotations: { readOnlyHint: readOnly }
    }, async (args) => ({ content: [{ type: "text", text: `${name} ${JSON.stringify(args)}` }] }))
  }
}
await server.connect(new StdioServerTransport())
