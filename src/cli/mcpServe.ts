import { McpServer } from "@effect/ai"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import type { FileSystem } from "@effect/platform"
import { type Context, Deferred, Duration, Effect, Fiber, Layer, Option, Stream } from "effect"
import pkg from "../../package.json" with { type: "json" }
import { replyThrough } from "../channels/web/follow.js"
import { reachRunning } from "../channels/web/running.js"
import * as AgentConfig from "../config/AgentConfig.js"
import { ProcessEnv } from "../config/ProcessEnv.js"
import { peerAgentInterface } from "../kernel/Audience.js"
import { registerMemoryTools, SendFailed, type SendMessage } from "../mcp/memoryServer.js"
import { conversationOfChat } from "../session/conversationIds.js"
import { recallLayer } from "./recall.js"

export interface McpServeArgs {
  readonly dir: string
  /** Offer `send_message`. */
  readonly allowSend: boolean
  /** The peer agent's name: its messages form the conversation `mcp-<peer>`. */
  readonly peer: string
  /** Seconds `send_message` waits for a running agent that does not answer yet. */
  readonly wait: number
}

/**
 * `send_message`: the message through the running agent's HTTP API, as interface `mcp` and channel `peer`, so its turn
 * belongs to the peer's own conversation; the reply is the turn's. A folder no agent serves gets a clear refusal: this
 * process never runs a turn itself (it would hold the folder an agent may start on).
 */
const sendThroughAgent = (
  args: McpServeArgs,
  context: Context.Context<FileSystem.FileSystem | ProcessEnv>
): SendMessage => (text) =>
  Effect.gen(function*() {
    // Read again at each message: the agent may have started (and written its port and token) since the server did.
    const loaded = yield* AgentConfig.loadConfig(args.dir)
    const up = yield* reachRunning(loaded, { wait: Duration.seconds(args.wait), report: (line) => Effect.logWarning(`kern: ${line}`) })
    if (Option.isNone(up)) {
      return yield* new SendFailed({
        message: `the agent in ${loaded.paths.dir} is not running, so it cannot answer; start it with \`kern start ${loaded.paths.dir}\``
      })
    }
    const { reply, delivered } = yield* replyThrough(up.value.client, { text, interface: peerAgentInterface, channel: args.peer })
    return delivered ? reply : "(the agent chose not to reply)"
  }).pipe(
    Effect.mapError((error) => error._tag === "SendFailed" ? error : new SendFailed({ message: error.message })),
    Effect.provide(NodeHttpClient.layerUndici),
    Effect.provide(context)
  )

/**
 * `kern mcp serve [dir]`: the agent's memory as an MCP server on stdin/stdout, until the client closes stdin. Reads take
 * no folder lock, so it runs beside a running agent; log lines go to stderr (stdout is the protocol).
 */
export const serve = (args: McpServeArgs) =>
  Effect.gen(function*() {
    const loaded = yield* AgentConfig.AgentConfig
    const send = args.allowSend ? sendThroughAgent(args, yield* Effect.context<FileSystem.FileSystem | ProcessEnv>()) : undefined
    const tools = Layer.effectDiscard(registerMemoryTools({ send }))
    // The client closing stdin is the end of the session: the server is stopped and the command exits 0.
    const closed = yield* Deferred.make<void>()
    const server = McpServer.layerStdio({
      name: `kern (${loaded.config.name}; conversation ${conversationOfChat(peerAgentInterface, args.peer)})`,
      version: pkg.version,
      stdin: NodeStream.stdin.pipe(Stream.ensuring(Deferred.succeed(closed, undefined))),
      stdout: NodeSink.stdout
    })
    // In a fiber of its own: @effect/rpc's stdio protocol interrupts the fiber that built it when its reader stops
    // (stdin ended, or the server closing), which must not be the command's.
    const serving = yield* Effect.fork(Layer.launch(tools.pipe(Layer.provide(server), Layer.provide(recallLayer))))
    yield* Effect.raceFirst(Deferred.await(closed), Fiber.join(serving))
    yield* Fiber.interrupt(serving)
    // Node keeps an ended stdin pipe open (NodeStream.stdin leaves it so), which would keep the process alive.
    yield* Effect.sync(() => process.stdin.destroy())
  }).pipe(Effect.provide(AgentConfig.layer(args.dir)))
