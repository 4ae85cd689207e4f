import { Console, Effect } from "effect"
import { openActiveSession } from "../agent/activeSession.js"
import { makeReplyFilter } from "../agent/envelope.js"
import { MessageQueue } from "../agent/MessageQueue.js"
import type { TurnEvent } from "../agent/TurnEvent.js"
import { TurnRunner } from "../agent/TurnRunner.js"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { MemoryCommits } from "../memory/MemoryCommits.js"
import { NotesSummary } from "../memory/NotesSummary.js"
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
    const { problems, session } = yield* openActiveSession({ fresh: args.newSession })
    for (const problem of problems) yield* Console.error(`kern: warning: ${problem}`)
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    yield* queue.offer({ interface: "cli", channel: "terminal", userId: "operator", text: args.message })
    const message = yield* queue.next
    const emit = args.json
      ? (event: TurnEvent) => write(process.stdout, `${JSON.stringify(event)}\n`)
      : humanEvent(makeReplyFilter())
    const outcome = yield* runner.run({ message, session, emit })
    yield* queue.endTurn
    // Committed before the process exits (and the folder is let go), so scripted chats keep their memory in git.
    yield* Effect.flatMap(MemoryCommits, (memory) => memory.afterTurn)
    // A summary this turn started is waited for (30 s at most), so the next chat finds it made.
    yield* Effect.flatMap(NotesSummary, (summary) => summary.settled())
    if (outcome.failure !== undefined) return yield* new CommandFailed({ message: outcome.failure.message })
  })).pipe(Effect.provide(agentRuntimeLayer(args.dir, { command: "kern chat", waitSeconds: args.wait })))
