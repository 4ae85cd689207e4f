// A real MCP server (the official SDK's McpServer over stdio) whose tools are read from a JSON file, for tests of a
// server that changes its tools: between runs (fingerprints) and while it runs (notifications/tools/list_changed).
//
// MCP_TOOLS_FILE names the file: { "tools": [{ "name", "description", "readOnly"?, "extraArg"? }] }. Each tool answers
// `<name>: <message>`. The file is watched: a tool added, dropped or described anew is registered, removed or updated,
// and the SDK tells the client its tool list changed. MCP_SPAWN_CHILD=1 starts a long-lived child process of its own
// (a grandchild of the agent), so a test can prove the server's whole tree is reaped.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import { z } from "zod"

const file = process.env.MCP_TOOLS_FILE
if (file === undefined) {
  process.stderr.write("MCP_TOOLS_FILE is not set\n")
  process.exit(2)
}

const server = new McpServer({ name: "changing", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } })

/** name → { registered, text }: the text is the tool's definition as last read, to see what changed. */
const live = new Map()

const read = () => {
  try {
    return JSON.parse(NodeFs.readFileSync(file, "utf8")).tools
  } catch {
    return undefined
  }
}

const register = (tool) =>
  server.registerTool(tool.name, {
    description: tool.description,
    inputSchema: tool.extraArg === undefined
      ? { message: z.string().describe("what to echo") }
      : { message: z.string().describe("what to echo"), [tool.extraArg]: z.string().optional() },
    annotations: { readOnlyHint: tool.readOnly === true }
  }, async ({ message }) => ({ content: [{ type: "text", text: `${tool.name}: ${message}` }] }))

const sync = () => {
  const tools = read()
  if (tools === undefined) return
  const wanted = new Map(tools.map((tool) => [tool.name, tool]))
  for (const [name, entry] of live) {
    const tool = wanted.get(name)
    if (tool === undefined || JSON.stringify(tool) !== entry.text) {
      entry.registered.remove()
      live.delete(name)
    }
  }
  for (const [name, tool] of wanted) {
    if (!live.has(name)) live.set(name, { registered: register(tool), text: JSON.stringify(tool) })
  }
}

sync()
NodeFs.watchFile(file, { interval: 50 }, sync)

// MCP_STARTS_FILE: a line per start, so a test can count how many times the server was started.
if (process.env.MCP_STARTS_FILE !== undefined) NodeFs.appendFileSync(process.env.MCP_STARTS_FILE, `${process.pid}\n`)

if (process.env.MCP_SPAWN_CHILD === "1") {
  const child = NodeChildProcess.spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
  process.stderr.write(`spawned child ${child.pid}\n`)
}

// The client closing stdin is the end of the session (the file watch would keep the process alive).
process.stdin.on("end", () => process.exit(0))
await server.connect(new StdioServerTransport())
process.stderr.write("changing server ready\n")
