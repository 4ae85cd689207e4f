import * as NodeCrypto from "node:crypto"
import type { McpServerConfig } from "../config/mcpServers.js"
import type { SafetyClass, ToolSpecInput } from "../kernel/contracts.js"
import { modelToolName } from "../kernel/aiTools.js"
import { thirdPartyContractTag } from "../kernel/contractCheck.js"
import { scopeTag } from "../kernel/toolScope.js"
import { argsFromJsonSchema, isJsonObject, type Json } from "../kernel/toolArgs.js"

/** A tool as an MCP server lists it (the fields kern reads). */
export interface McpTool {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly inputSchema: Json
  readonly annotations?: {
    readonly title?: string | undefined
    readonly readOnlyHint?: boolean | undefined
    readonly destructiveHint?: boolean | undefined
    readonly idempotentHint?: boolean | undefined
    readonly openWorldHint?: boolean | undefined
  } | undefined
}

/** OpenAI and Anthropic take function names of at most 64 characters. */
const maxModelName = 64

/**
 * `mcp.<server>.<tool>`, in the characters a tool id allows: `getUser` → `get_user`, anything else → `_`. A name that
 * would make the model's function name (`mcp__server__tool`) longer than providers accept is cut and given a hash.
 */
export const mcpToolId = (server: string, tool: string): string => {
  const cleaned = tool
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, "_")
  const id = `mcp.${server}.${cleaned === "" ? "tool" : cleaned}`
  if (modelToolName(id).length <= maxModelName) return id
  const hash = NodeCrypto.createHash("sha256").update(tool).digest("hex").slice(0, 6)
  const room = maxModelName - modelToolName(`mcp.${server}.`).length - hash.length - 1
  return `mcp.${server}.${cleaned.slice(0, room)}_${hash}`
}

/**
 * The safety class a tool's annotations claim: readOnlyHint → READ_ONLY, destructiveHint → DESTRUCTIVE, openWorldHint
 * → NETWORK, otherwise LOCAL_WRITE. The config's override for the tool wins.
 */
export const safetyClassOf = (tool: McpTool, override?: SafetyClass): SafetyClass => {
  if (override !== undefined) return override
  const hints = tool.annotations ?? {}
  if (hints.readOnlyHint === true) return "READ_ONLY"
  if (hints.destructiveHint === true) return "DESTRUCTIVE"
  if (hints.openWorldHint === true) return "NETWORK"
  return "LOCAL_WRITE"
}

/** The toolScope a paired user needs: read-only tools for `read`, writes for `write`, the rest for `full`. */
const scopeOf = (safetyClass: SafetyClass) =>
  safetyClass === "READ_ONLY" ? "read" as const : safetyClass === "LOCAL_WRITE" ? "write" as const : "full" as const

/** The risk tag every tool of `server` carries: how its registrations are found again. */
export const serverTag = (server: string) => `mcp:${server}`

/** The kernel's cap on one call's timeout; longer ones go through `timeoutFor`. */
export const maxSpecTimeoutMs = 60_000

/** A server's tool as a kernel contract. */
export const mcpToolSpec = (server: string, config: McpServerConfig, tool: McpTool): ToolSpecInput => {
  const override = config.overrides[tool.name]
  const safetyClass = safetyClassOf(tool, override?.safetyClass)
  const inputSchema = isJsonObject(tool.inputSchema) ? tool.inputSchema : { type: "object" }
  const timeoutMs = Math.min(Math.max(override?.timeoutMs ?? config.timeoutMs, 100), maxSpecTimeoutMs)
  const idempotent = safetyClass === "READ_ONLY" || tool.annotations?.idempotentHint === true
  return {
    toolId: mcpToolId(server, tool.name),
    name: tool.title ?? tool.annotations?.title ?? tool.name,
    description: `${tool.description ?? ""}`.trim() || `${tool.name} (MCP server ${server})`,
    safetyClass,
    idempotent,
    // A tool on another process may have done its work before a failure reached us: never call it twice by itself.
    maxRetries: 0,
    timeoutMs,
    sideEffectLevel: safetyClass === "READ_ONLY" ? "none" : safetyClass === "LOCAL_WRITE" ? "local_write" : "external_write",
    argsSchema: argsFromJsonSchema(inputSchema).map((arg) => ({ ...arg })),
    argsJsonSchema: inputSchema,
    riskTags: [scopeTag(scopeOf(safetyClass)), serverTag(server), thirdPartyContractTag]
  }
}

/** The tools a server's `tools` allow list lets through. */
export const allowedTools = <T extends { readonly name: string }>(config: McpServerConfig, tools: ReadonlyArray<T>) =>
  config.tools === undefined ? tools : tools.filter((tool) => config.tools?.includes(tool.name))
