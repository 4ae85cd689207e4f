import { Console, Effect, Option } from "effect"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { McpServers } from "../mcp/McpServers.js"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { findRunning } from "../channels/web/running.js"
import { describeState, type McpServerState } from "../mcp/McpServerState.js"
import { type McpToolRow, mcpToolRows } from "../mcp/McpToolRow.js"
import { mcpToolId } from "../mcp/toolSpecs.js"
import { AgentConfig, loadConfig } from "../config/AgentConfig.js"
import { kernelAgentLayer } from "./agentLayer.js"
import { CommandFailed } from "./errors.js"
import { runTool } from "./kernel.js"
import { table } from "./table.js"

// `kern mcp list` and `kern mcp tools` ask the running agent when one runs (its servers are already connected);
// otherwise, and for `call` and `prompts`, `kern mcp …` connects to the agent's MCP servers itself (a `first-use`
// server when a command names it), as `kern kernel …` builds the kernel itself. `kern mcp serve` (the agent's memory
// to other agents) is in mcpServe.ts.

export interface McpListArgs {
  readonly dir: string
  readonly json: boolean
}

export interface McpToolsArgs extends McpListArgs {
  readonly server: string
}

export interface McpPromptsArgs extends McpListArgs {
  readonly server: Option.Option<string>
}

export interface McpCallArgs extends McpToolsArgs {
  readonly tool: string
  readonly args: string
}

/** The running agent's client, when an agent runs in the folder and answers: `kern mcp list|tools` ask it. */
const runningAgent = (dir: string) =>
  Effect.flatMap(loadConfig(dir), (loaded) => findRunning(loaded)).pipe(
    Effect.map(Option.map((running) => running.client)),
    Effect.provide(NodeHttpClient.layer)
  )

const printStates = (states: ReadonlyArray<McpServerState>, json: boolean) =>
  Effect.gen(function*() {
    if (json) return yield* Console.log(JSON.stringify(states))
    if (states.length === 0) return yield* Console.log("no MCP servers configured (mcpServers in .kern/config.json)")
    yield* Console.log(table(["server", "transport", "state"], states.map((s) => [s.name, s.transport, describeState(s)])))
    for (const state of states) {
      if (state.state === "failed" && state.stderrTail !== undefined) {
        yield* Console.log(`\n${state.name} stderr (last lines):\n${state.stderrTail}`)
      }
    }
  })

/** The servers as the running agent has them; with no agent running, connected here (those started with the agent). */
export const list = (args: McpListArgs) =>
  Effect.gen(function*() {
    const running = yield* runningAgent(args.dir)
    if (Option.isSome(running)) {
      const status = yield* Effect.mapError(running.value.status, (error) => new CommandFailed({ message: error.message }))
      return yield* printStates(status.mcpServers ?? [], args.json)
    }
    yield* Effect.flatMap(McpServers, (servers) => servers.states).pipe(
      Effect.flatMap((states) => printStates(states, args.json)),
      Effect.provide(kernelAgentLayer(args.dir))
    )
  })

const connected = (server: string) =>
  Effect.flatMap(McpServers, (servers) => servers.ensure(server)).pipe(
    Effect.zipRight(Effect.flatMap(McpServers, (servers) => servers.tools(server))),
    Effect.mapError((failure) => new CommandFailed({ message: failure.message }))
  )

const printTools = (rows: ReadonlyArray<McpToolRow>, json: boolean) =>
  json
    ? Console.log(JSON.stringify(rows))
    : Console.log(table(
      ["tool", "kernel tool", "safety", "description"],
      rows.map((row) => [row.tool, row.toolId ?? "(not in the allow list)", row.safetyClass, row.description.split("\n")[0]!.slice(0, 60)])
    ))

/** A server's tools as the running agent has them; with no agent running, from a connection of its own. */
export const tools = (args: McpToolsArgs) =>
  Effect.gen(function*() {
    const running = yield* runningAgent(args.dir)
    if (Option.isSome(running)) {
      const rows = yield* Effect.mapError(running.value.mcpTools(args.server), (error) => new CommandFailed({ message: error.message }))
      return yield* printTools(rows, args.json)
    }
    yield* Effect.gen(function*() {
      const listed = yield* connected(args.server)
      const { config } = yield* AgentConfig
      yield* printTools(mcpToolRows(args.server, config.mcpServers[args.server], listed, yield* ToolRegistry), args.json)
    }).pipe(Effect.provide(kernelAgentLayer(args.dir)))
  })

export const call = (args: McpCallArgs) =>
  Effect.gen(function*() {
    yield* connected(args.server)
    yield* runTool({ toolId: mcpToolId(args.server, args.tool), args: args.args, json: args.json, safetyMode: Option.none() })
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))

/** One prompt a server offers, as `kern mcp prompts` shows it. */
interface PromptRow {
  readonly server: string
  readonly prompt: string
  readonly description: string
  readonly arguments: ReadonlyArray<{ readonly name: string; readonly description?: string | undefined; readonly required: boolean }>
}

/** A server's prompts, every page; none when it does not offer prompts. */
const serverPrompts = (server: string) =>
  Effect.gen(function*() {
    const client = yield* Effect.flatMap(McpServers, (servers) => servers.client(server))
    if (client.getServerCapabilities()?.prompts === undefined) return []
    return yield* Effect.tryPromise({
      try: async () => {
        const rows: Array<PromptRow> = []
        let cursor: string | undefined
        do {
          const page = await client.listPrompts(cursor === undefined ? {} : { cursor })
          for (const prompt of page.prompts) {
            rows.push({
              server,
              prompt: prompt.name,
              description: prompt.description ?? "",
              arguments: (prompt.arguments ?? []).map((arg) => ({
                name: arg.name,
                description: arg.description,
                required: arg.required === true
              }))
            })
          }
          cursor = page.nextCursor
        } while (cursor !== undefined)
        return rows
      },
      catch: (error) => new CommandFailed({ message: `MCP server "${server}" could not list its prompts: ${String(error)}` })
    })
  }).pipe(Effect.mapError((failure) => new CommandFailed({ message: failure.message })))

export const prompts = (args: McpPromptsArgs) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const names = Option.match(args.server, {
      onNone: () => Object.entries(config.mcpServers).filter(([, server]) => server.enabled).map(([name]) => name),
      onSome: (server) => [server]
    })
    // Listing every server, one that cannot be reached is said on stderr and the others are listed.
    const rows = (yield* Effect.forEach(names, (name) =>
      Option.isSome(args.server)
        ? serverPrompts(name)
        : serverPrompts(name).pipe(Effect.catchAll((failure) => Effect.as(Console.error(`kern: ${failure.message}`), []))))).flat()
    if (args.json) return yield* Console.log(JSON.stringify(rows))
    if (rows.length === 0) return yield* Console.log("no MCP server offers prompts")
    yield* Console.log(table(
      ["server", "prompt", "arguments", "description"],
      rows.map((row) => [
        row.server,
        row.prompt,
        row.arguments.map((arg) => `${arg.name}${arg.required ? "*" : ""}`).join(", ") || "-",
        row.description.split("\n")[0]!.slice(0, 60)
      ])
    ))
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))
