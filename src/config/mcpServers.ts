import { Schema } from "effect"

const Text = Schema.NonEmptyTrimmedString.annotations({ identifier: "a non-empty string" })
const PositiveInt = Schema.Int.pipe(Schema.positive()).annotations({ identifier: "a positive integer" })
const HttpUrl = Text.pipe(Schema.filter((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol)))
  .annotations({ identifier: "an http(s) URL" })

export const McpSafetyClass = Schema.Literal("READ_ONLY", "LOCAL_WRITE", "NETWORK", "DESTRUCTIVE")

/** What config may change about one tool of a server: its safety class and its kernel timeout. */
export const McpToolOverride = Schema.Struct({
  safetyClass: Schema.optional(McpSafetyClass),
  timeoutMs: Schema.optional(PositiveInt)
})

/** `first-use`: connected when one of its tools is first listed or called; `agent`: when the agent starts. */
export const McpStart = Schema.Literal("agent", "first-use")

const common = {
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  start: Schema.optionalWith(McpStart, { default: () => "agent" as const }),
  /** A call's kernel timeout (the kernel caps it at 60 s). */
  timeoutMs: Schema.optionalWith(PositiveInt, { default: () => 30_000 }),
  /** Only these tools are registered (by the server's names); all when absent. */
  tools: Schema.optional(Schema.Array(Text)),
  overrides: Schema.optionalWith(Schema.Record({ key: Schema.String, value: McpToolOverride }), { default: () => ({}) })
}

const StringRecord = Schema.Record({ key: Schema.String, value: Schema.String })

/** A server kern starts as a child process and talks to over stdin/stdout. */
export const McpStdioServer = Schema.Struct({
  command: Text,
  args: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  env: Schema.optionalWith(StringRecord, { default: () => ({}) }),
  cwd: Schema.optional(Text),
  ...common
})

/** A server reached over Streamable HTTP (SSE when it speaks only that). */
export const McpHttpServer = Schema.Struct({
  url: HttpUrl,
  headers: Schema.optionalWith(StringRecord, { default: () => ({}) }),
  ...common
})

export const McpServerConfig = Schema.Union(McpStdioServer, McpHttpServer)
export type McpServerConfig = typeof McpServerConfig.Type
export type McpStdioServer = typeof McpStdioServer.Type
export type McpHttpServer = typeof McpHttpServer.Type

export const isStdio = (server: McpServerConfig): server is McpStdioServer => "command" in server

/** A server's name: it becomes part of tool ids (`mcp.<server>.<tool>`) and of the model's function names. */
export const isMcpServerName = (name: string): boolean => /^[a-z][a-z0-9_-]{0,23}$/.test(name)

export const mcpServerNameRule = "a server name is a lowercase letter, then lowercase letters, digits, \"_\" or \"-\" (at most 24)"

export const McpServers = Schema.Record({ key: Schema.String, value: McpServerConfig }).pipe(
  Schema.filter((servers) => {
    const bad = Object.keys(servers).find((name) => !isMcpServerName(name))
    return bad === undefined || `${mcpServerNameRule}, not ${JSON.stringify(bad)}`
  })
)
export type McpServers = typeof McpServers.Type

/** What each key of a server accepts, as the config error says it. */
export const mcpServerExpectations: Readonly<Record<string, string>> = {
  command: "a non-empty string (the program that runs the server)",
  args: "an array of strings",
  env: "an object of variable name → string (\"${NAME}\" takes the value of NAME in .kern/.env)",
  cwd: "a non-empty string (a folder)",
  url: "an http(s) URL such as \"http://localhost:3001/mcp\"",
  headers: "an object of header name → string (\"${NAME}\" takes the value of NAME in .kern/.env)",
  enabled: "true or false",
  start: "\"agent\" or \"first-use\"",
  timeoutMs: "a positive integer (milliseconds)",
  tools: "an array of tool names (the only tools registered)",
  overrides: "an object of tool name → { safetyClass?, timeoutMs? }"
}

export const mcpServersExpectation =
  "an object of server name → { command, args?, env?, cwd? } or { url, headers? }, with enabled?, start?, timeoutMs?, tools?, overrides?"

const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/** The variable names `${NAME}` references in a value. */
export const referencedNames = (value: string): ReadonlyArray<string> => [...value.matchAll(reference)].map((m) => m[1] ?? "")

/** Every variable a server's env and header values reference: secrets the guard must know. */
export const secretReferences = (servers: McpServers): ReadonlyArray<string> =>
  Object.values(servers).flatMap((server) =>
    Object.values(isStdio(server) ? server.env : server.headers).flatMap(referencedNames)
  )

/** A value with its `${NAME}` references replaced, or the first name `env` lacks. */
export const resolveReferences = (
  value: string,
  env: Readonly<Record<string, string>>
): { readonly value: string } | { readonly missing: string } => {
  const missing = referencedNames(value).find((name) => env[name] === undefined)
  if (missing !== undefined) return { missing }
  return { value: value.replace(reference, (_, name: string) => env[name] ?? "") }
}
