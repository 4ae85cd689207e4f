import { Context, Effect } from "effect"
import type { McpServerConfig } from "../config/mcpServers.js"
import { contractFingerprint } from "../kernel/fingerprint.js"
import { makeSpec, type ToolRegistry } from "../kernel/ToolRegistry.js"
import type { ToolFailure } from "../kernel/ToolFailure.js"
import { allowedTools, maxSpecTimeoutMs, type McpTool, mcpToolId, mcpToolSpec, serverTag } from "./toolSpecs.js"

export type McpCall = (
  tool: string,
  args: Readonly<Record<string, unknown>>,
  options: { readonly timeoutMs: number }
) => Effect.Effect<string, ToolFailure>

/**
 * Registers a connected server's tools (those its `tools` allow list lets through) as kernel tools
 * `mcp.<server>.<tool>`. A tool registered by an earlier connection keeps its registration; when the server now
 * describes it differently its spec is replaced, so the executor sees the change as a contract mismatch. A tool that
 * cannot be registered is logged and left out: a server never stops the agent.
 */
export const registerServerTools = (
  registry: ToolRegistry["Type"],
  server: string,
  config: McpServerConfig,
  tools: ReadonlyArray<McpTool>,
  call: McpCall
) =>
  Effect.forEach(allowedTools(config, tools), (tool) => {
    const input = mcpToolSpec(server, config, tool)
    const configured = config.overrides[tool.name]?.timeoutMs ?? config.timeoutMs
    // The kernel's timeout of the call (the spec's, at least 100 ms): the request's own, which keeps to it.
    const timeoutMs = Math.max(configured, input.timeoutMs ?? 0)
    const existing = registry.lookup(String(input.toolId))
    const registered = existing === undefined
      ? registry.register<Record<string, unknown>, Record<string, unknown>, never>(input, {
        handler: (args) => call(tool.name, args, { timeoutMs }),
        // A timeout longer than the kernel's cap of one call's (60 s) travels as the call's own.
        ...(timeoutMs > maxSpecTimeoutMs ? { timeoutFor: () => timeoutMs } : {}),
        // The request times out and is cancelled on the server (notifications/cancelled) by itself.
        selfTimed: true
      }).pipe(
        // The handler needs no service (the call is closed over): registered with none, the executor copies no
        // context of the agent's services into every call's fiber (two copies of ~40 entries, about 6 µs a call).
        Effect.mapInputContext((_: Context.Context<never>) => Context.empty())
      )
      : Effect.flatMap(makeSpec(input), (spec) =>
        contractFingerprint(spec) === existing.fingerprint ? Effect.succeed(existing) : registry.replaceSpec(input))
    return registered.pipe(
      Effect.asVoid,
      Effect.catchAll((error) => Effect.logWarning(`kern: MCP tool "${tool.name}" of server "${server}" is not offered: ${error.message}`))
    )
  }, { discard: true })

/**
 * Makes the registry hold exactly the tools `server` offers now (a connection, a restart, a list_changed
 * notification): the ones it offers registered or updated as registerServerTools does, the ones it dropped (or the
 * allow list now leaves out) unregistered. Their ids, as [registered, unregistered].
 */
export const syncServerTools = (
  registry: ToolRegistry["Type"],
  server: string,
  config: McpServerConfig,
  tools: ReadonlyArray<McpTool>,
  call: McpCall
) =>
  Effect.gen(function*() {
    const offered = new Set(allowedTools(config, tools).map((tool) => mcpToolId(server, tool.name)))
    const stale = (yield* registry.listTools)
      .filter((tool) => tool.spec.riskTags.includes(serverTag(server)) && !offered.has(tool.spec.toolId))
      .map((tool) => tool.spec.toolId)
    yield* Effect.forEach(stale, registry.unregister, { discard: true })
    yield* registerServerTools(registry, server, config, tools, call)
    if (stale.length > 0) yield* Effect.logInfo(`kern: MCP server "${server}" no longer offers ${stale.join(", ")}`)
    return [[...offered], stale] as const
  })
