import { Deferred, Duration, Effect, Exit, Queue, type Scope } from "effect"
import { isStdio, type McpServerConfig, resolveReferences } from "../config/mcpServers.js"
import { type Json } from "../kernel/toolArgs.js"
import { streamBuffer, type StreamBuffer } from "../tools/processGroup.js"
import { callTagVariable, makeCallTag, reapTag } from "../tools/processTag.js"
import { McpFailure } from "./McpFailure.js"
import type { McpServerState } from "./McpServerState.js"
import { loadSdk, type Sdk, type SdkClient } from "./sdk.js"
import type { McpTool } from "./toolSpecs.js"
import { waitAtMost } from "../config/waitAtMost.js"

/**
 * One live connection to a server: its client, its tools as first listed, a Deferred completed with the reason it
 * closed, and a signal for each notifications/tools/list_changed the server sends (`listTools` lists them anew).
 */
export interface Connection {
  readonly client: SdkClient
  readonly tools: ReadonlyArray<McpTool>
  readonly transport: McpServerState["transport"]
  readonly closed: Deferred.Deferred<string>
  readonly toolsChanged: Queue.Dequeue<void>
  readonly listTools: Effect.Effect<ReadonlyArray<McpTool>, McpFailure>
}

export interface ConnectOptions {
  readonly name: string
  readonly config: McpServerConfig
  /** The agent's environment (inherited with `.kern/.env` on top): where `${NAME}` references are resolved. */
  readonly env: Readonly<Record<string, string>>
  /** The agent folder's real path: the tag of a stdio server's processes starts with its key (processTag.ts). */
  readonly root: string
  /** Where a stdio server's stderr goes (the tail shown when it fails). */
  readonly stderr: StreamBuffer
  readonly connectTimeoutMs: number
}

const clientInfo = { name: "kern", version: "1" }

const refusal =
  "kern does not answer requests from MCP servers (sampling, elicitation, roots): the tool must work without them"

/** Every `${NAME}` of a record resolved, or a config failure naming the server, the key and the missing variable. */
const resolveRecord = (name: string, field: string, values: Readonly<Record<string, string>>, env: Readonly<Record<string, string>>) =>
  Effect.forEach(Object.entries(values), ([key, value]) => {
    const resolved = resolveReferences(value, env)
    return "missing" in resolved
      ? Effect.fail(new McpFailure({
        server: name,
        reason: "config",
        detail: `${field}.${key} names \${${resolved.missing}}, which is not set in .kern/.env or the environment`
      }))
      : Effect.succeed([key, resolved.value] as const)
  }).pipe(Effect.map((pairs) => Object.fromEntries(pairs)))

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * A client that refuses what a server asks of it, completes `closed` when the connection ends, and signals
 * `toolsChanged` when the server says its tool list changed.
 */
const makeClient = (sdk: Sdk, closed: Deferred.Deferred<string>, toolsChanged: Queue.Queue<void>) => {
  const client = new sdk.Client(clientInfo, { capabilities: {} })
  client.fallbackRequestHandler = (request) =>
    Promise.reject(new sdk.McpError(sdk.ErrorCode.MethodNotFound, `${refusal} (asked for "${request.method}")`))
  client.onclose = () => Deferred.unsafeDone(closed, Exit.succeed("the connection closed"))
  client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
    toolsChanged.unsafeOffer(undefined)
  })
  return client
}

const listAllTools = (client: SdkClient, name: string) =>
  Effect.tryPromise({
    try: async () => {
      const tools: Array<McpTool> = []
      let cursor: string | undefined
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor })
        for (const tool of page.tools) {
          tools.push({
            name: tool.name,
            title: tool.title,
            description: tool.description,
            inputSchema: tool.inputSchema as Json,
            annotations: tool.annotations
          })
        }
        cursor = page.nextCursor
      } while (cursor !== undefined)
      return tools
    },
    catch: (error) => new McpFailure({ server: name, reason: "connect", detail: `could not list its tools: ${describeError(error)}` })
  })

const connectWith = (client: SdkClient, transport: Parameters<SdkClient["connect"]>[0], options: ConnectOptions) =>
  Effect.tryPromise({
    try: (signal) => client.connect(transport, { signal, timeout: options.connectTimeoutMs }),
    catch: (error) => new McpFailure({ server: options.name, reason: "connect", detail: describeError(error) })
  })

/** Closes the client, giving a server a moment to finish; what a stdio server left running is killed by its tag. */
const closeClient = (client: SdkClient, name: string) =>
  // In a finalizer: bounded by waitAtMost, where a timeout would wait for a close that never comes.
  waitAtMost(Effect.tryPromise(() => client.close()), Duration.seconds(2)).pipe(
    Effect.catchAll((error) => Effect.logWarning(`kern: MCP server "${name}" did not close cleanly: ${String(error)}`))
  )

const stdio = (sdk: Sdk, options: ConnectOptions, config: Extract<McpServerConfig, { command: string }>) =>
  Effect.gen(function*() {
    const env = yield* resolveRecord(options.name, "env", config.env, options.env)
    const tag = yield* makeCallTag(options.root)
    const closed = yield* Deferred.make<string>()
    const toolsChanged = yield* Queue.sliding<void>(1)
    const transport = new sdk.StdioClientTransport({
      command: config.command,
      args: [...config.args],
      env: { ...env, [callTagVariable]: tag },
      cwd: config.cwd ?? options.root,
      stderr: "pipe"
    })
    transport.stderr?.on("data", (chunk: Buffer) => options.stderr.push(chunk))
    const client = makeClient(sdk, closed, toolsChanged)
    // Whatever happens next, the server's processes are gone when the scope closes: the agent stopping, the server
    // being restarted, or a connection that failed half-way.
    yield* Effect.addFinalizer(() => Effect.zipRight(closeClient(client, options.name), reapTag(tag)))
    yield* connectWith(client, transport, options)
    return { client, closed, toolsChanged, transport: "stdio" as const }
  })

const http = (sdk: Sdk, options: ConnectOptions, config: Extract<McpServerConfig, { url: string }>) =>
  Effect.gen(function*() {
    const headers = yield* resolveRecord(options.name, "headers", config.headers, options.env)
    const url = new URL(config.url)
    const attempt = (kind: "http" | "sse") =>
      Effect.gen(function*() {
        const closed = yield* Deferred.make<string>()
        const toolsChanged = yield* Queue.sliding<void>(1)
        const client = makeClient(sdk, closed, toolsChanged)
        const transport = kind === "http"
          ? new sdk.StreamableHTTPClientTransport(url, { requestInit: { headers } })
          : new sdk.SSEClientTransport(url, { requestInit: { headers } })
        yield* Effect.addFinalizer(() => closeClient(client, options.name))
        yield* connectWith(client, transport, options)
        return { client, closed, toolsChanged, transport: kind }
      })
    // A server that speaks only the older HTTP+SSE transport refuses the Streamable HTTP handshake.
    return yield* attempt("http").pipe(
      Effect.catchAll((first) =>
        attempt("sse").pipe(
          Effect.mapError((second) =>
            new McpFailure({
              server: options.name,
              reason: "connect",
              detail: `Streamable HTTP: ${first.detail}; SSE: ${second.detail}`
            })
          )
        )
      )
    )
  })

/** Connects to a server through the official SDK's transports and lists its tools; closed with the scope. */
export const connect = (options: ConnectOptions): Effect.Effect<Connection, McpFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const sdk = yield* loadSdk
    const { config } = options
    const opened = isStdio(config) ? yield* stdio(sdk, options, config) : yield* http(sdk, options, config)
    const listTools = listAllTools(opened.client, options.name)
    const tools = yield* listTools
    return { ...opened, tools, listTools }
  }).pipe(Effect.withSpan("kern.mcp.connect", { attributes: { server: options.name } }))

export const newStderrBuffer = (): StreamBuffer => streamBuffer(8192)

