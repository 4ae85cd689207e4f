import { Console, Effect } from "effect"
import * as Agent from "../agent/Agent.js"
import { makeReplyFilter } from "../agent/envelope.js"
import type { TurnEvent } from "../agent/TurnEvent.js"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { agentRuntimeLayer } from "./agentLayer.js"

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
  return text.length > 100 ? `${text.slice(0, 97)}...` : text
}

/** Human output: the reply streamed to stdout (never a NO_REPLY), a line per tool call and result on stderr. */
const humanEvent = (filter: ReturnType<typeof makeReplyFilter>) => (event: TurnEvent): Effect.Effect<void> => {
  switch (event.type) {
    case "text":
      return show(process.stdout, filter.push(event.delta))
    case "tool-call":
      return show(process.stderr, `\n→ ${event.name} ${short(event.params)}\n`)
    case "tool-result":
      return show(process.stderr, `${event.isError ? "✗" : "✓"} ${event.name}: ${short(event.text.split("\n")[0] ?? "")}\n`)
    case "done": {
      const rest = filter.end(event.reply)
      return show(process.stdout, event.delivered ? `${rest}\n` : rest)
    }
    default:
      return Effect.void
  }
}

/**
 * `kern chat -m TEXT`: one operator message, the reply streamed, then exit. The folder is held for the turn, so
 * chats started together take their turns one after another.
 */
export const run = (args: ChatArgs) =>
  Effect.scoped(Effect.gen(function*() {
    const agent = yield* Agent.make({ newSession: args.newSession, report: (line) => Console.error(`kern: ${line}`) })
    const onEvent = args.json
      ? (event: TurnEvent) => event.type === "step" ? Effect.void : write(process.stdout, `${JSON.stringify(event)}\n`)
      : humanEvent(makeReplyFilter())
    // The memory is committed after the turn and a notes summary it started is waited for before the folder is let
    // go. A failed turn fails with its TurnFailure: one line, exit 1.
    yield* agent.send(args.message, { interface: "cli", channel: "terminal", onEvent })
  })).pipe(Effect.provide(agentRuntimeLayer(args.dir, { command: "kern chat", waitSeconds: args.wait })))
