import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, type DateTime, Duration, Effect, Option, PubSub, Schema, Stream } from "effect"
import * as Agent from "../agent/Agent.js"
import type { AgentEvent } from "../channels/web/api.js"
import { approvalInfo } from "../channels/approvalInfo.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { clip } from "../config/clip.js"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { redactSecrets } from "../kernel/secretGuard.js"
import { Approvals, localOperator } from "../runtime/Approvals.js"
import { agentZone } from "../session/envelope.js"
import { askInline, chatApprovalNotice, chatApprovalResolved } from "./chatApprovals.js"
import { isTurnEvent, TurnEvent } from "../turn/TurnEvent.js"
import { neutralizeControls } from "../channels/terminalSafe.js"
import type { AgentClient } from "../channels/web/client.js"
import { makeTurnFollower } from "../channels/web/follow.js"
import { reachRunning } from "../channels/web/running.js"
import { loadConfig } from "../config/AgentConfig.js"
import { agentRuntimeLayer } from "./agentLayer.js"
import { CommandFailed } from "./errors.js"

export interface ChatArgs {
  readonly dir: string
  readonly message: string
  readonly json: boolean
  readonly newSession: boolean
  /** Seconds to wait for another runtime that holds the folder. */
  readonly wait: number
}

const write = (stream: NodeJS.WriteStream, text: string) => Effect.sync(() => stream.write(text))
/** Model and tool text for a person's terminal: its control sequences shown, not obeyed. */
const show = (stream: NodeJS.WriteStream, text: string) => write(stream, neutralizeControls(text))

const short = (value: unknown): string => {
  const text = typeof value === "string" ? value : JSON.stringify(value)
  return clip(text, 100)
}

/** Human output: the reply streamed to stdout (never a NO_REPLY), a line per tool call and result on stderr. */
const humanEvent = (event: TurnEvent): Effect.Effect<void> => {
  switch (event.type) {
    case "text-delta":
      return show(process.stdout, event.delta)
    case "tool-call":
      return show(process.stderr, `\n→ ${event.name} ${short(event.params)}\n`)
    case "tool-result":
      return show(process.stderr, `${event.isError ? "✗" : "✓"} ${event.name}: ${short(event.text.split("\n")[0] ?? "")}\n`)
    case "context":
    case "retry":
      return show(process.stderr, `kern: ${event.text}\n`)
    case "finish":
      return event.delivered ? show(process.stdout, "\n") : Effect.void
    default:
      return Effect.void
  }
}

/**
 * One `--json` line: the turn's event as it was made, encoded by its Schema. Through a running agent, the event came
 * over `GET /events`: the Schema leaves out what the stream added (`seq`, `at`), so the lines are the same.
 */
const jsonLine = (event: TurnEvent) =>
  Schema.encode(TurnEvent)(event).pipe(
    // The event was decoded or made as a TurnEvent: one that does not encode is kern's bug, not the user's.
    Effect.orDie,
    Effect.flatMap((encoded) => write(process.stdout, `${JSON.stringify(encoded)}\n`))
  )

/** `--json` lines, or the human output. */
const eventPrinter = (json: boolean): (event: TurnEvent) => Effect.Effect<void> => json ? jsonLine : humanEvent

/** y/n can be asked only where a person types: stdin and stderr both a terminal. */
const onTerminal = () => process.stdin.isTTY === true && process.stderr.isTTY === true

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
 * The approvals of `kern chat` turns in the running agent, from its events (its HTTP door redacted their arguments):
 * each with its id and the `kern approve` / `kern deny` commands, on a terminal asked y/n.
 */
const followRemoteApprovals = (client: AgentClient, zone: DateTime.TimeZone) => {
  const shown = new Set<string>()
  const inline = onTerminal()
  return (event: AgentEvent) => {
    if (event.type === "approval" && event.interface === "cli" && event.channel === "terminal") {
      shown.add(event.id)
      const notice = write(process.stderr, chatApprovalNotice(event, inline ? "inline" : "commands", zone))
      if (!inline) return notice
      return Effect.zipRight(
        notice,
        Effect.forkScoped(askInline(event.id).pipe(
          Effect.flatMap((approved) => client.decide(event.id, approved)),
          Effect.catchAll((error) => Console.error(`kern: ${event.id}: ${error.message}`))
        ))
      )
    }
    if (event.type === "approval-resolved" && shown.has(event.id)) return write(process.stderr, chatApprovalResolved(event))
    return Effect.void
  }
}

/** The turn in this process, holding the folder for it: when no agent runs in the background. */
const inProcess = (args: ChatArgs) =>
  Effect.scoped(Effect.gen(function*() {
    const agent = yield* Agent.make({ newSession: args.newSession, report: (line) => Console.error(`kern: ${line}`) })
    yield* followLocalApprovals
    // The memory is committed after the turn and a notes summary it started is waited for before the folder is let
    // go. A failed turn fails with its TurnFailure: one line, exit 1.
    yield* agent.send(args.message, { interface: "cli", channel: "terminal", onEvent: eventPrinter(args.json) })
  })).pipe(Effect.provide(agentRuntimeLayer(args.dir, { command: "kern chat", waitSeconds: args.wait })))

/**
 * The turn through the running agent: subscribed to its events first, then the message posted, then its turn's
 * events printed as the in-process chat prints them (they are the same events), until it finishes.
 */
const throughAgent = (client: AgentClient, args: ChatArgs, zone: DateTime.TimeZone) =>
  Effect.scoped(Effect.gen(function*() {
    if (args.newSession) yield* client.newSession
    const events = yield* client.events()
    const { turnId } = yield* client.send({ text: args.message, interface: "cli", channel: "terminal" })
    const mine = makeTurnFollower(turnId)
    const print = eventPrinter(args.json)
    const approval = followRemoteApprovals(client, zone)
    let failure: string | undefined
    let finished = false
    yield* events.pipe(
      Stream.tap(approval),
      Stream.filter(mine),
      Stream.filter(isTurnEvent),
      Stream.takeUntil((event) => event.type === "finish"),
      Stream.runForEach((event) => {
        if (event.type === "finish") finished = true
        if (event.type === "error") failure = event.message
        return print(event)
      })
    )
    if (!finished) return yield* new CommandFailed({ message: `the connection to the agent ended before turn ${turnId} finished; it goes on in the background` })
    if (failure !== undefined) return yield* new CommandFailed({ message: failure })
  }))

/**
 * `kern chat -m TEXT`: one operator message, the reply streamed, then exit. When the agent runs (kern start, or
 * kern run elsewhere) the message goes through its HTTP API, where the agent recorded it listens, however slow it is
 * to answer (up to `--wait`); otherwise the folder is held for the turn, so chats started together take their turns
 * one after another.
 */
export const run = (args: ChatArgs) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(args.dir)
    const up = loaded.fileExists
      ? yield* reachRunning(loaded, { wait: Duration.seconds(args.wait), report: (line) => Console.error(`kern: ${line}`) })
      : Option.none()
    if (Option.isSome(up)) return yield* throughAgent(up.value.client, args, agentZone(loaded.config.timezone))
    yield* inProcess(args)
  }).pipe(Effect.provide(NodeHttpClient.layerUndici))
