import { Effect, Schema } from "effect"
import type { ToolSpecInput } from "../kernel/contracts.js"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import type { ToolRegistry } from "../kernel/ToolRegistry.js"
import { scopeTag } from "../kernel/toolScope.js"
import type { McpFailure } from "./McpFailure.js"
import { requestFailure, resultText } from "./results.js"
import type { SdkClient } from "./sdk.js"

// `mcp_resource`: the resources MCP servers offer, listed and read on demand through the kernel. It is registered
// while at least one connected server offers resources, so a model is offered it only when it can be used.

export const resourceToolId = "mcp_resource"

/** Characters of one resource the tool returns; the kernel's output compaction applies below this as to every tool. */
export const maxResourceChars = 100_000

/** Resources and templates one listing shows. */
const maxListed = 200

export const ResourceArgs = Schema.Struct({
  server: Schema.optional(Schema.NonEmptyTrimmedString.annotations({
    description: "the MCP server; without it, the servers that offer resources are listed"
  })),
  uri: Schema.optional(Schema.NonEmptyTrimmedString.annotations({
    description: "the resource to read (a URI the listing gave, or one a template describes); without it, the server's resources are listed"
  }))
})
export type ResourceArgs = typeof ResourceArgs.Type

const spec: ToolSpecInput = {
  toolId: resourceToolId,
  name: "MCP resource",
  description: "Read what an MCP server offers as resources (documents, files, records). {} lists the servers that " +
    "offer resources; { server } lists that server's resources and URI templates; { server, uri } reads one. " +
    "Binary contents are described, not shown.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  maxRetries: 0,
  timeoutMs: 30_000,
  sideEffectLevel: "none",
  riskTags: [scopeTag("read"), "mcp"]
}

/** How the tool reaches servers: those offering resources now, and a connected server's client. */
export interface ResourceAccess {
  readonly servers: Effect.Effect<ReadonlyArray<string>>
  readonly client: (server: string) => Effect.Effect<SdkClient, McpFailure>
}

const capped = (text: string) =>
  text.length <= maxResourceChars
    ? text
    : `${text.slice(0, maxResourceChars)}\n[… ${text.length - maxResourceChars} more characters not shown]`

const request = <A>(server: string, what: string, run: (client: SdkClient, signal: AbortSignal) => Promise<A>) =>
  (access: ResourceAccess) =>
    Effect.flatMap(
      Effect.mapError(access.client(server), (failure) => toolFailure("NOT_FOUND", failure.message)),
      (client) =>
        Effect.tryPromise({
          try: (signal) => run(client, signal),
          catch: (error) => requestFailure(server, what, error)
        })
    )

const line = (entry: { readonly uri?: string; readonly uriTemplate?: string; readonly name: string; readonly mimeType?: string | undefined; readonly description?: string | undefined }) =>
  `- ${entry.uri ?? entry.uriTemplate ?? "?"} — ${entry.name}${entry.mimeType === undefined ? "" : ` (${entry.mimeType})`}${
    entry.description === undefined ? "" : `: ${entry.description.split("\n")[0]}`
  }`

const list = (server: string, access: ResourceAccess) =>
  request(server, "resources/list", async (client, signal) => {
    const resources: Array<string> = []
    let cursor: string | undefined
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor }, { signal })
      resources.push(...page.resources.map(line))
      cursor = resources.length < maxListed ? page.nextCursor : undefined
    } while (cursor !== undefined)
    const templates = await client.listResourceTemplates({}, { signal }).then(
      (page) => page.resourceTemplates.map(line),
      () => [] as Array<string>
    )
    const shown = resources.slice(0, maxListed)
    return [
      `Resources of MCP server "${server}" (${shown.length}${resources.length > maxListed ? ` of more` : ""}):`,
      ...(shown.length === 0 ? ["(none)"] : shown),
      ...(templates.length === 0 ? [] : ["URI templates (fill in the {parameters} to read one):", ...templates.slice(0, maxListed)])
    ].join("\n")
  })(access)

const read = (server: string, uri: string, access: ResourceAccess) =>
  request(server, `resources/read ${uri}`, (client, signal) => client.readResource({ uri }, { signal }))(access).pipe(
    Effect.map((result) => capped(resultText({ content: result.contents.map((resource) => ({ type: "resource", resource })) })))
  )

export const runResourceTool = (args: ResourceArgs, access: ResourceAccess): Effect.Effect<string, ToolFailure> =>
  Effect.gen(function*() {
    const offering = yield* access.servers
    if (args.server === undefined) {
      return offering.length === 0
        ? "No connected MCP server offers resources."
        : `MCP servers that offer resources: ${offering.join(", ")}. Call with { server } to list one's resources.`
    }
    if (!offering.includes(args.server)) {
      return yield* toolFailure(
        "NOT_FOUND",
        `MCP server "${args.server}" offers no resources now (servers that do: ${offering.join(", ") || "none"})`
      )
    }
    return yield* args.uri === undefined ? list(args.server, access) : read(args.server, args.uri, access)
  }).pipe(Effect.withSpan("kern.mcp.resource", { attributes: { server: args.server ?? "", uri: args.uri ?? "" } }))

/** Registers `mcp_resource` while a connected server offers resources, and unregisters it when none does. */
export const syncResourceTool = (registry: ToolRegistry["Type"], access: ResourceAccess) =>
  Effect.gen(function*() {
    const offering = yield* access.servers
    const registered = registry.lookup(resourceToolId) !== undefined
    if (offering.length > 0 && !registered) {
      yield* registry.register(spec, { parameters: ResourceArgs, handler: (args) => runResourceTool(args, access) }).pipe(
        Effect.catchAll((error) => Effect.logWarning(`kern: ${resourceToolId} is not offered: ${error.message}`))
      )
    }
    if (offering.length === 0 && registered) yield* registry.unregister(resourceToolId)
  })
