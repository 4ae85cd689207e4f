// `kern chat` through a running agent: the client side only (the agent's HTTP API, its events printed). It imports no
// runtime module (no model, tokenizer, SQLite or tool), so the quick chat bundle (src/quick/chat.ts) that runs it
// stays small; src/cli/chat.ts runs it too, and holds the folder for a turn of its own when no agent serves it.
import { Console, type DateTime, Duration, Effect, Option, Schema, Stream } from "effect"
import type { AgentEvent } from "../channels/web/api.js"
import type { AgentClient } from "../channels/web/client.js"
import { makeTurnFollower } from "../channels/web/follow.js"
import { reachRunning } from "../channels/web/running.js"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { clip } from "../config/clip.js"
import { loadConfig } from "../config/AgentConfig.js"
import { agentZone } from "../session/envelope.js"
import { isTurnEvent, TurnEvent } from "../turn/TurnEvent.js"
import { askInline, chatApprovalNotice, chatApprovalResolved } from "./chatApprovals.js"
import { type ChatFile, readChatFiles } from "./chatFiles.js"
import { CommandFailed } from "./errors.js"

export interface ChatArgs {
  readonly dir: string
  /** What to say; may be empty when files come with it. */
  readonly message: string
  /** `--file` paths, in order (relative to the current folder). */
  readonly files: ReadonlyArray<string>
  readonly json: boolean
  readonly newSession: boolean
  /** Seconds to wait for another runtime that holds the folder. */
  readonly wait: number
}

export const write = (stream: NodeJS.WriteStream, text: string) => Effect.sync(() => stream.write(text))
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
export const eventPrinter = (json: boolean): (event: TurnEvent) => Effect.Effect<void> => json ? jsonLine : humanEvent

/** y/n can be asked only where a person types: stdin and stderr both a terminal. */
export const onTerminal = () => process.stdin.isTTY === true && process.stderr.isTTY === true

/**
 * The approvals of `kern chat` turns in the running agent, from its events (its HTTP door redacted their arguments):
 * each with its id and the `kern approve` / `kern deny` commands, on a terminal asked y/n. The agent's time zone is
 * made for the first notice only: making one loads the ICU time zone data (~8 MiB and a tenth of a second), which a
 * chat without approvals never needs.
 */
const followRemoteApprovals = (client: AgentClient, zoneOf: () => DateTime.TimeZone) => {
  const shown = new Set<string>()
  const inline = onTerminal()
  let zone: DateTime.TimeZone | undefined
  return (event: AgentEvent) => {
    if (event.type === "approval" && event.interface === "cli" && event.channel === "terminal") {
      shown.add(event.id)
      zone ??= zoneOf()
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

/**
 * The turn through the running agent: subscribed to its events first, then the message posted, then its turn's
 * events printed as the in-process chat prints them (they are the same events), until it finishes.
 */
const throughAgent = (client: AgentClient, args: ChatArgs, files: ReadonlyArray<ChatFile>, zoneOf: () => DateTime.TimeZone) =>
  Effect.scoped(Effect.gen(function*() {
    if (args.newSession) yield* client.newSession
    const events = yield* client.events()
    const sent = files.map((file) => ({ name: file.name, data: Buffer.from(file.bytes).toString("base64") }))
    const { turnId } = yield* client.send({
      text: args.message,
      interface: "cli",
      channel: "terminal",
      ...(sent.length === 0 ? {} : { files: sent })
    })
    const mine = makeTurnFollower(turnId)
    const print = eventPrinter(args.json)
    const approval = followRemoteApprovals(client, zoneOf)
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
 * The chat's `--file` files, read and checked against the folder's media caps first (a wrong path fails before any
 * agent is asked), and the chat through the folder's running agent, when one serves it (kern start, or kern run
 * elsewhere): where the agent recorded it listens, however slow it is to answer (up to `--wait`). `remote` is none
 * when no agent serves the folder, or it is not an agent folder: then the caller runs the turn itself, over the
 * configuration loaded here (`loaded`).
 */
export const chatThroughRunning = (args: ChatArgs) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(args.dir)
    const files = yield* readChatFiles(args.files, loaded.config.media)
    const up = loaded.fileExists
      ? yield* reachRunning(loaded, { wait: Duration.seconds(args.wait), report: (line) => Console.error(`kern: ${line}`) })
      : Option.none()
    const remote = Option.map(up, (agent) => throughAgent(agent.client, args, files, () => agentZone(loaded.config.timezone)))
    return { files, remote, loaded } as const
  })
