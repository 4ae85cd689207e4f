import { Console, Effect, Option } from "effect"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { McpServers } from "../mcp/McpServers.js"
import { describeState } from "../mcp/McpServerState.js"
import { mcpToolId, safetyClassOf } from "../mcp/toolSpecs.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { kernelAgentLayer } from "./agentLayer.js"
import { CommandFailed } from "./errors.js"
import { runTool } from "./kernel.js"
import { table } from "./table.js"

// `kern mcp …` connects to the agent's MCP servers itself (a `first-use` server when a command names it), as
// `kern kernel …` builds the kernel itself. `kern mcp serve` (the agent's memory to other agents) is in mcpServe.ts.

export interface McpListArgs {
  readonly dir: string
  readonly json: boolean
}

export interface McpToolsArgs extends McpListArgs {
  readonly server: string
}

export interface McpCallArgs extends McpToolsArgs {
  readonly tool: string
  readonly args: string
}

export const list = (args: McpListArgs) =>
  Effect.gen(function*() {
    const states = yield* (yield* McpServers).states
    if (args.json) return yield* Console.log(JSON.stringify(states))
    if (states.length === 0) return yield* Console.log("no MCP servers configured (mcpServers in .kern/config.json)")
    yield* Console.log(table(["server", "transport", "state"], states.map((s) => [s.name, s.transport, describeState(s)])))
    for (const state of states) {
      if (state.state === "failed" && state.stderrTail !== undefined) {
        yield* Console.log(`\n${state.name} stderr (last lines):\n${state.stderrTail}`)
      }
    }
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))

const connected = (server: string) =>
  Effect.flatMap(McpServers, (servers) => servers.ensure(server)).pipe(
    Effect.zipRight(Effect.flatMap(McpServers, (servers) => servers.tools(server))),
    Effect.mapError((failure) => new CommandFailed({ message: failure.message }))
  )

export const tools = (args: McpToolsArgs) =>
  Effect.gen(function*() {
    const listed = yield* connected(args.server)
    const { config } = yield* AgentConfig
    const registry = yield* ToolRegistry
    const server = config.mcpServers[args.server]
    const rows = listed.map((tool) => {
      const id = mcpToolId(args.server, tool.name)
      const registered = registry.lookup(id)
      return {
        tool: tool.name,
        toolId: registered === undefined ? null : id,
        safetyClass: registered?.spec.safetyClass ?? safetyClassOf(tool, server?.overrides[tool.name]?.safetyClass),
        description: tool.description ?? ""
      }
    })
    if (args.json) return yield* Console.log(JSON.stringify(rows))
    yield* Console.log(table(
      ["tool", "kernel tool", "safety", "description"],
      rows.map((row) => [row.tool, row.toolId ?? "(not in the allow list)", row.safetyClass, row.description.split("\n")[0]!.slice(0, 60)])
    ))
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))

export const call = (args: McpCallArgs) =>
  Effect.gen(function*() {
    yield* connected(args.server)
    yield* runTool({ toolId: mcpToolId(args.server, args.tool), args: args.args, json: args.json, safetyMode: Option.none() })
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))
