/**
 * `kern mcp serve`: the agent's memory served to other agents over MCP (@effect/ai's McpServer). Four tools:
 * `recall_search` and `recall_load` over the recall index, `read_memory` for knowledge/ and notes/ (through the one
 * door to agent files, src/storage/agentFiles.ts), and, only when the operator allows it, `send_message`: a message
 * to the agent, answered by a turn in the sender's own conversation. Every answer passes the one redactor.
 */
import { McpSchema, McpServer } from "@effect/ai"
import { FileSystem } from "@effect/platform"
import { Effect, JSONSchema, ParseResult, Schema } from "effect"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { redactSecrets, redactSecretsInText } from "../kernel/secretGuard.js"
import { loadText, searchText, type WholeHit } from "../recall/format.js"
import { Recall } from "../recall/Recall.js"
import { LoadRequest, LoadResult, SearchRequest, SearchResult } from "../recall/schema.js"
import { readAgentText } from "../storage/agentFiles.js"
import { orIfMissing } from "../storage/missingFile.js"

/** The folders of the agent folder `read_memory` reads: its long-term knowledge and its daily notes. */
export const memoryFolders = ["knowledge", "notes"] as const

/** What `send_message` does with a message: hands it to the running agent and gives back its reply. */
export type SendMessage = (text: string) => Effect.Effect<string, SendFailed>

/** Why `send_message` got no reply: the agent is not running, refused the message, or failed the turn. */
export class SendFailed extends Schema.TaggedError<SendFailed>()("SendFailed", { message: Schema.String }) {}

export interface MemoryServerOptions {
  /** `send_message` is offered only with this (`kern mcp serve --allow-send`). */
  readonly send?: SendMessage | undefined
}

/** A tool's answer: its text for the model, and the same as JSON where there is structure. */
const answer = (text: string, structured?: unknown) =>
  new McpSchema.CallToolResult({
    content: [{ type: "text", text }],
    ...(structured === undefined ? {} : { structuredContent: structured }),
    isError: false
  })

const refusal = (text: string) => new McpSchema.CallToolResult({ content: [{ type: "text", text }], isError: true })

/** The arguments a tool was called with, decoded; a mistake named by field, as the caller must fix it. */
const decodeArgs = <A, I>(schema: Schema.Schema<A, I>, tool: string, payload: unknown) =>
  Schema.decodeUnknown(schema, { onExcessProperty: "error" })(payload ?? {}).pipe(
    Effect.mapError((error) => `${tool}: bad arguments: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
  )

const ReadMemoryArgs = Schema.Struct({
  path: Schema.String.annotations({
    description: "a file under knowledge/ or notes/ (e.g. notes/2026-11-27.md), or one of those folders to list its files"
  })
})

const SendMessageArgs = Schema.Struct({
  text: Schema.NonEmptyTrimmedString.annotations({ description: "the message for the agent" })
})

/** For another agent: the tool that reads a cut hit whole. */
const mcpWholeHit: WholeHit = (hit) =>
  hit.source === "session"
    ? `recall_load { "sessionId": ${JSON.stringify(hit.sessionId)}, "messageStart": ${hit.messageStart}, ` +
      `"messageEnd": ${hit.messageEnd} } reads the messages whole`
    : `read_memory { "path": ${JSON.stringify(hit.path)} } reads the whole file`

/**
 * Where `path` (as another agent names it) lies: a folder of `memoryFolders` to list, a file inside one to read, or a
 * refusal saying why. Only the name is judged here; the door then judges what the name leads to (links, .kern/).
 */
export const memoryPath = (
  path: string
): { readonly folder: string } | { readonly file: string } | { readonly refused: string } => {
  const trimmed = path.trim()
  if (trimmed === "" || trimmed.includes("\0")) return { refused: "read_memory: path must name a file under knowledge/ or notes/" }
  if (NodePath.posix.isAbsolute(trimmed) || NodePath.win32.isAbsolute(trimmed) || trimmed.includes("\\")) {
    return { refused: `read_memory: ${JSON.stringify(path)} is not a path inside the agent folder; name one under knowledge/ or notes/` }
  }
  const normal = NodePath.posix.normalize(trimmed).replace(/\/+$/, "")
  const first = normal.split("/")[0] ?? ""
  if (normal.startsWith("..") || !(memoryFolders as ReadonlyArray<string>).includes(first)) {
    return { refused: `read_memory: ${JSON.stringify(path)} is outside knowledge/ and notes/, the only folders it reads` }
  }
  return normal === first ? { folder: first } : { file: normal }
}

/** Registers the memory tools on the MCP server of this process. */
export const registerMemoryTools = (options: MemoryServerOptions) =>
  Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    const recall = yield* Recall
    const { paths } = yield* AgentConfig
    const { secrets } = yield* KnownSecrets
    const fs = yield* FileSystem.FileSystem
    const clean = (text: string) => redactSecretsInText(text, secrets)
    const readOnly = new McpSchema.ToolAnnotations({ readOnlyHint: true, destructiveHint: false, openWorldHint: false, idempotentHint: true })

    const recallOff = refusal(`recall is off for this agent ("recall": false in .kern/config.json)`)

    /**
     * One tool: its arguments decoded by `args` (a mistake named by field), `run` on them, and any failure given back
     * as the tool's answer. `unavailable`, when it says so, answers before the arguments are looked at.
     */
    const addTool = <A, I>(spec: {
      readonly name: string
      readonly description: string
      readonly args: Schema.Schema<A, I>
      readonly annotations: McpSchema.ToolAnnotations
      readonly unavailable?: () => McpSchema.CallToolResult | undefined
      readonly run: (args: A) => Effect.Effect<McpSchema.CallToolResult, { readonly message: string }>
    }) =>
      server.addTool({
        tool: new McpSchema.Tool({
          name: spec.name,
          description: spec.description,
          inputSchema: JSONSchema.make(spec.args),
          annotations: spec.annotations
        }),
        handle: (payload) =>
          Effect.suspend(() => {
            const off = spec.unavailable?.()
            return off !== undefined ? Effect.succeed(off) : Effect.flatMap(decodeArgs(spec.args, spec.name, payload), spec.run)
          }).pipe(
            Effect.catchAll((error) => Effect.succeed(refusal(typeof error === "string" ? error : clean(error.message))))
          )
      })
    const whenRecallOff = () => (recall.enabled ? undefined : recallOff)

    yield* addTool({
      name: "recall_search",
      description: "Search the agent's past conversations and its knowledge/ and notes/ files (keywords and meaning). " +
        "Each hit names the session and message range (or file); recall_load reads the messages whole.",
      args: SearchRequest.omit("exclude"),
      annotations: readOnly,
      unavailable: whenRecallOff,
      run: (request) =>
        Effect.map(recall.search(request), (result) =>
          answer(clean(searchText(result, mcpWholeHit)), redactSecrets(Schema.encodeSync(SearchResult)(result), secrets)))
    })

    yield* addTool({
      name: "recall_load",
      description: "Read past messages of a session in full, by the message range a recall_search hit names. A long " +
        "range comes in pages: the answer says where the next one starts.",
      args: LoadRequest,
      annotations: readOnly,
      unavailable: whenRecallOff,
      run: (request) =>
        Effect.map(recall.load(request), (result) =>
          answer(clean(loadText(result, request.messageEnd)), redactSecrets(Schema.encodeSync(LoadResult)(result), secrets)))
    })

    const listFolder = (folder: string) =>
      fs.readDirectory(NodePath.join(paths.dir, folder), { recursive: true }).pipe(
        orIfMissing(() => []),
        Effect.map((names) =>
          names.map((name) => `${folder}/${name.split(NodePath.sep).join("/")}`).filter((name) => name.endsWith(".md")).sort()
        )
      )

    yield* addTool({
      name: "read_memory",
      description: "Read one of the agent's memory files: its knowledge (knowledge/…) or its daily notes " +
        "(notes/YYYY-MM-DD.md). Name a folder (knowledge or notes) to list its files.",
      args: ReadMemoryArgs,
      annotations: readOnly,
      run: ({ path }) =>
        Effect.gen(function*() {
          const where = memoryPath(path)
          if ("refused" in where) return refusal(where.refused)
          if ("folder" in where) {
            const files = yield* listFolder(where.folder)
            return answer(files.length === 0 ? `${where.folder}/ holds no files yet` : files.join("\n"), { files })
          }
          // Through the door: a link into .kern/ or out of the folder, a FIFO or a hard link is refused there.
          return answer(clean(yield* readAgentText(where.file, { roots: [paths.dir] })))
        })
    })

    const send = options.send
    if (send !== undefined) {
      yield* addTool({
        name: "send_message",
        description: "Send the agent a message and get its reply. The agent answers in a conversation of its own " +
          "with you, apart from its operator's; it may use its tools to do so.",
        args: SendMessageArgs,
        annotations: new McpSchema.ToolAnnotations({ readOnlyHint: false, destructiveHint: false, openWorldHint: true, idempotentHint: false }),
        run: ({ text }) => Effect.map(send(text), (reply) => answer(clean(reply)))
      })
    }
  })
