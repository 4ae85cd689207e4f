import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Option, PubSub, Stream } from "effect"
import * as Agent from "../agent/Agent.js"
import { approvalInfo } from "../channels/approvalInfo.js"
import { AgentConfig, type LoadedConfig } from "../config/AgentConfig.js"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { redactSecrets } from "../kernel/secretGuard.js"
import { Approvals, localOperator } from "../runtime/Approvals.js"
import { ingestFiles } from "../media/ingestFiles.js"
import { agentZone } from "../session/envelope.js"
import { agentRuntimeLayer } from "./agentLayer.js"
import { askInline, chatApprovalNotice, chatApprovalResolved } from "./chatApprovals.js"
import { followLocalQuestions } from "./chatQuestions.js"
import type { ChatFile } from "./chatFiles.js"
import { type ChatArgs, chatThroughRunning, eventPrinter, onTerminal, write } from "./chatRemote.js"
import { CommandFailed, UsageError } from "./errors.js"

export type { ChatArgs }

/**
 * The approvals the turn in this process asks for, on stderr with their id (arguments through the one redactor), and
 * on a terminal asked y/n. Subscribed before the turn starts, in the caller's scope.
 */
const followLocalApprovals = Effect.gen(function*() {
  const approvals = yield* Approvals
  const { secrets } = yield* KnownSecrets
  const { config } = yield* AgentConfig
  const zone = agentZone(config.timezone)
  const asked = yield* PubSub.subscribe(approvals.requests)
  const answered = yield* PubSub.subscribe(approvals.resolved)
  const inline = onTerminal()
  const answer = (id: string) =>
    askInline(id).pipe(
      Effect.flatMap((approved) => approvals.decide(id, approved, localOperator("cli"))),
      Effect.catchTag("ApprovalError", (error) => Console.error(`kern: ${error.message}`))
    )
  yield* Effect.forkScoped(Stream.fromQueue(asked).pipe(Stream.runForEach((pending) => {
    const info = redactSecrets(approvalInfo(pending), secrets)
    return Effect.zipRight(
      write(process.stderr, chatApprovalNotice(info, inline ? "inline" : "nobody", zone)),
      inline ? Effect.asVoid(answer(info.id)) : Effect.void
    )
  })))
  yield* Effect.forkScoped(Stream.fromQueue(answered).pipe(
    Stream.runForEach((resolution) => write(process.stderr, chatApprovalResolved(resolution)))
  ))
})

/**
 * The turn in this process, holding the folder for it: when no agent runs in the background. The configuration the
 * chat loaded to look for a running agent is the agent's (loaded once, not again for the layer); a folder that is not
 * an agent's is refused by its path as the user named it.
 */
const inProcess = (args: ChatArgs, files: ReadonlyArray<ChatFile>, loaded: LoadedConfig) =>
  Effect.scoped(Effect.gen(function*() {
    // Stored in the agent's media store (its caps checked again, its type sniffed) before the turn is queued.
    const attachments = yield* ingestFiles(files).pipe(Effect.mapError((rejected) => new CommandFailed({ message: rejected.message })))
    const agent = yield* Agent.make({ newSession: args.newSession, report: (line) => Console.error(`kern: ${line}`), oneShot: true })
    yield* followLocalApprovals
    yield* followLocalQuestions
    // The memory is committed after the turn and a notes summary it started is waited for before the folder is let
    // go. A failed turn fails with its TurnFailure: one line, exit 1.
    yield* agent.send(args.message, { interface: "cli", channel: "terminal", onEvent: eventPrinter(args.json), attachments })
  })).pipe(Effect.provide(agentRuntimeLayer(loaded.fileExists ? loaded : args.dir, { command: "kern chat", waitSeconds: args.wait })))

/**
 * `kern chat -m TEXT [--file PATH]…`: one operator message (with files, or files alone), the reply streamed, then
 * exit. When the agent runs (kern start, or kern run elsewhere) the message goes through its HTTP API, where the agent
 * recorded it listens, however slow it is to answer (up to `--wait`); otherwise the folder is held for the turn, so
 * chats started together take their turns one after another.
 */
export const run = (args: ChatArgs) =>
  Effect.gen(function*() {
    if (args.message.trim() === "" && args.files.length === 0) {
      return yield* new UsageError({ message: "nothing to send: give -m TEXT, --file PATH, or both" })
    }
    const { files, loaded, remote } = yield* chatThroughRunning(args)
    if (Option.isSome(remote)) return yield* remote.value
    yield* inProcess(args, files, loaded)
  }).pipe(Effect.provide(NodeHttpClient.layerUndici))
