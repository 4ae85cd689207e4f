import { Console, type DateTime, Effect, Ref, Stream } from "effect"
import * as NodeReadline from "node:readline"
import { Writable } from "node:stream"
import type { AgentEventInput } from "./AgentEvent.js"
import { parseApprovalAnswer } from "./approvalPrompt.js"
import { parseQuestionAnswer } from "./questionPrompt.js"
import { ProcessEnv } from "../config/ProcessEnv.js"
import { wantsColor } from "../config/wantsColor.js"
import { makeMarkdownStream } from "./terminalMarkdown.js"
import { helpText, showEvent, terminalConversation } from "./terminalFormat.js"
import { neutralizeControls } from "./terminalSafe.js"

/** Why the agent could not do what the terminal asked (not stored, not reachable, no such approval). */
export interface PeerFailure {
  readonly message: string
}

/**
 * What the terminal talks to: the agent in this process (Terminal.ts), or a running one over HTTP
 * (web/remoteTerminal.ts). The loop is the same for both.
 */
export interface TerminalPeer {
  /** The first line an interactive terminal shows. */
  readonly greeting: string
  /** The agent's time zone: when an approval is denied unanswered is shown in it. */
  readonly zone: DateTime.TimeZone
  /** Every event of the agent, subscribed before the loop starts (a reconnecting peer resumes it). */
  readonly events: Stream.Stream<AgentEventInput>
  /** An operator message of the terminal's conversation, stored and queued once this succeeds. */
  readonly send: (text: string) => Effect.Effect<void, PeerFailure>
  readonly decide: (id: string, approved: boolean) => Effect.Effect<void, PeerFailure>
  /** Answers a question of a terminal turn (option indices, 0-based, and/or words). */
  readonly answer: (id: string, reply: { readonly choices: ReadonlyArray<number>; readonly text?: string }) => Effect.Effect<void, PeerFailure>
  /** The lines `/status` shows. */
  readonly status: Effect.Effect<string, PeerFailure>
  /** The lines `/usage` shows: today's model spend against the `limits` caps. */
  readonly usage: Effect.Effect<string, PeerFailure>
  /** Starts a new session (`/new`): its id. */
  readonly newSession: Effect.Effect<string, PeerFailure>
  /** Stops the running turns as the operator (`/stop`): the ids of those it stopped (none when nothing ran). */
  readonly stopTurns: Effect.Effect<ReadonlyArray<string>, PeerFailure>
  /** Ctrl-C on a terminal: `stop` stops kern as a signal does (the agent runs here), `leave` leaves it running. */
  readonly ctrlC: "stop" | "leave"
  /** Once input ends (or /quit): what the loop waits for before it returns. */
  readonly leaving: Effect.Effect<void>
}

export interface TerminalOptions {
  /** Show a prompt and a greeting (the TUI); headless, only the answers are written. */
  readonly interactive: boolean
}

/** What `/stop` says: the turn's own error line follows from the event stream. */
export const stopText = (stopped: ReadonlyArray<string>): string =>
  stopped.length === 0 ? "no turn is running" : `stopping ${stopped.length === 1 ? "the running turn" : `${stopped.length} running turns`}`

const write = (text: string) => Effect.sync(() => process.stdout.write(text))

/**
 * What the operator types. On a terminal, readline edits the line itself (raw mode) and its echo goes through a
 * gate: while a turn streams, the echo is held back so typing never lands inside the reply, and the line typed so far
 * is drawn again after the reply. Ctrl-C there says what was typed and not sent, then stops kern as a signal does, or
 * leaves the running agent.
 */
const makeInput = (tty: boolean, ctrlC: TerminalPeer["ctrlC"]) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const gate = { open: true }
      const echo = new Writable({
        write(chunk, _encoding, done) {
          if (gate.open) process.stdout.write(chunk)
          done()
        }
      })
      const rl = NodeReadline.createInterface({
        input: process.stdin,
        ...(tty ? { output: echo, terminal: true, prompt: "> " } : { terminal: false })
      })
      if (tty) {
        rl.on("SIGINT", () => {
          const typed = rl.line.trim()
          process.stdout.write(`\n${typed === "" ? "" : `not sent: ${neutralizeControls(typed)}\n`}`)
          if (ctrlC === "stop") process.kill(process.pid, "SIGINT")
          else rl.close()
        })
      }
      return { rl, gate }
    }),
    ({ rl }) => Effect.sync(() => rl.close())
  )

type Input = Effect.Effect.Success<ReturnType<typeof makeInput>>

/** Lines typed on stdin, ending when stdin closes. */
const linesOf = ({ rl }: Input) =>
  Stream.async<string>((emit) => {
    rl.on("line", (line) => emit.single(line))
    rl.on("close", () => emit.end())
  })

/**
 * The terminal: operator messages and commands from stdin to the peer, every event of the agent (every channel's
 * turns, approvals, the message tool's sends) shown on stdout, approvals answered by y / n.
 */
export const runTerminalLoop = (peer: TerminalPeer, options: TerminalOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const tty = options.interactive && process.stdin.isTTY === true && process.stdout.isTTY === true
    const input = yield* makeInput(tty, peer.ctrlC)
    // On a terminal the prompt is readline's, drawn again with whatever was typed meanwhile.
    const prompt = tty
      ? Effect.sync(() => {
        input.gate.open = true
        input.rl.prompt(true)
      })
      : options.interactive
      ? write("> ")
      : Effect.void
    const holdEcho = Effect.sync(() => {
      input.gate.open = !tty
    })
    // The approvals waiting, oldest first: y / n answer the first.
    const waiting = yield* Ref.make<ReadonlyArray<string>>([])
    // The questions of the terminal's own turns, oldest first: the next line typed answers the first.
    const asked = yield* Ref.make<ReadonlyArray<{ readonly id: string; readonly options: ReadonlyArray<string> }>>([])
    // Replies as markdown on a terminal that takes colour; piped or under NO_COLOR, as written. The text is neutralized
    // first, so the only escape sequences written are the renderer's own styles.
    const markdown = makeMarkdownStream(wantsColor(yield* ProcessEnv, process.stdout.isTTY === true))
    const show = (event: AgentEventInput) =>
      Effect.gen(function*() {
        if (event.type === "approval") yield* Ref.update(waiting, (ids) => ids.includes(event.id) ? ids : [...ids, event.id])
        if (event.type === "approval-resolved") yield* Ref.update(waiting, (ids) => ids.filter((id) => id !== event.id))
        if (event.type === "question" && event.interface === terminalConversation.interface) {
          yield* Ref.update(asked, (all) => all.some((q) => q.id === event.id) ? all : [...all, { id: event.id, options: event.options }])
        }
        if (event.type === "question-resolved") yield* Ref.update(asked, (all) => all.filter((q) => q.id !== event.id))
        const shown = neutralizeControls(showEvent(event, peer.zone))
        yield* write(event.type === "text-delta" ? markdown.push(shown) : markdown.flush() + shown)
        if (event.type === "finish") yield* prompt
      })
    yield* Effect.forkScoped(Stream.runForEach(peer.events, show))

    /** A command done (or why not said), then the prompt again. */
    const done = (effect: Effect.Effect<void, PeerFailure>) =>
      effect.pipe(
        Effect.catchAll((error) => Console.log(`kern: ${error.message}`)),
        Effect.zipRight(prompt),
        Effect.as(true)
      )
    const said = (effect: Effect.Effect<string, PeerFailure>) => done(Effect.flatMap(effect, Console.log))

    const command = (text: string): Effect.Effect<boolean> => {
      switch (text.split(/\s+/)[0]) {
        case "/quit":
        case "/exit":
          return Effect.succeed(false)
        case "/help":
          return said(Effect.succeed(helpText))
        case "/status":
          return said(peer.status)
        case "/usage":
          return said(peer.usage)
        case "/new":
          return said(Effect.map(peer.newSession, (id) => `new session ${id}`))
        case "/stop":
          return said(Effect.map(peer.stopTurns, stopText))
        default:
          return said(Effect.succeed(`unknown command ${text}; /help lists them`))
      }
    }

    const handle = (line: string): Effect.Effect<boolean> =>
      Effect.flatMap(Ref.get(waiting), (ids) => {
        const text = line.trim()
        if (text === "") return Effect.as(prompt, true)
        const decision = parseApprovalAnswer(text, ids)
        if (decision !== undefined) {
          return decision._tag === "Answer"
            ? done(Effect.zipRight(
              peer.decide(decision.id, decision.approved),
              Ref.update(waiting, (all) => all.filter((id) => id !== decision.id))
            ))
            : said(Effect.succeed(`kern: ${decision.message}`))
        }
        // Slash commands are the operator's, on a terminal or piped in: they never reach the model.
        if (text.startsWith("/")) return command(text)
        return Effect.flatMap(Ref.get(asked), ([question]) =>
          question === undefined
            ? message(text)
            : done(Effect.zipRight(
              peer.answer(question.id, parseQuestionAnswer(text, question)),
              Ref.update(asked, (all) => all.filter((q) => q.id !== question.id))
            )))
      })

    const message = (text: string): Effect.Effect<boolean> =>
      Effect.as(
        Effect.zipRight(
          holdEcho,
          // Not stored, so not sent: say so and let the operator try again.
          peer.send(text).pipe(Effect.catchAll((error) => Effect.zipRight(Console.log(`kern: not sent: ${error.message}`), prompt)))
        ),
        true
      )

    if (options.interactive) yield* Effect.zipRight(Console.log(peer.greeting), prompt)
    yield* linesOf(input).pipe(Stream.mapEffect(handle), Stream.takeWhile((goOn) => goOn), Stream.runDrain)
    yield* peer.leaving
  }))
