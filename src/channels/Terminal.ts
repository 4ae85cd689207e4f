import { Console, Effect, Fiber, PubSub, Queue, Ref, Schedule, Stream } from "effect"
import * as NodeReadline from "node:readline"
import { Writable } from "node:stream"
import { AgentRuntime } from "../runtime/AgentRuntime.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { agentZone, localIso } from "../session/envelope.js"
import { Approvals, localOperator } from "../runtime/Approvals.js"
import { approvalInfo } from "./approvalInfo.js"
import { formatApprovalRequest, formatApprovalResolved, parseApprovalAnswer } from "./approvalPrompt.js"
import { Channels } from "../tools/Channels.js"
import { formatOutgoing, helpText, showEvent } from "./terminalFormat.js"
import { neutralizeControls } from "./terminalSafe.js"

export interface TerminalOptions {
  /** Show a prompt and a greeting (the TUI); headless, only the answers are written. */
  readonly interactive: boolean
}

const write = (text: string) => Effect.sync(() => process.stdout.write(text))

/**
 * What the operator types. On a terminal, readline edits the line itself (raw mode) and its echo goes through a
 * gate: while a turn streams, the echo is held back so typing never lands inside the reply, and the line typed so far
 * is drawn again after the reply. Ctrl-C there says what was typed and not sent, then stops kern as a signal does.
 */
const makeInput = (tty: boolean) =>
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
          process.kill(process.pid, "SIGINT")
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
 * The terminal channel: operator messages from stdin into the queue, every turn streamed to stdout. The agent
 * runtime serves the queue in the background for as long as this runs.
 */
export const runTerminal = (options: TerminalOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const runtime = yield* AgentRuntime
    const { config } = yield* AgentConfig
    const tty = options.interactive && process.stdin.isTTY === true && process.stdout.isTTY === true
    const input = yield* makeInput(tty)
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
    const subscription = yield* PubSub.subscribe(runtime.events)
    const zone = agentZone(config.timezone)
    // The turn took out a NO_REPLY marker at the source: text is shown as it comes.
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(subscription), ({ event, message }) =>
      Effect.zipRight(
        write(neutralizeControls(showEvent(event, zone))),
        event.type === "finish" && message.interface === "terminal" ? prompt : Effect.void
      ))))
    // Approvals: every one waiting is shown here (this is the operator's console), oldest answered first by y / n.
    const approvals = yield* Approvals
    const asked = yield* PubSub.subscribe(approvals.requests)
    const answered = yield* PubSub.subscribe(approvals.resolved)
    const waiting = yield* Ref.make<ReadonlyArray<string>>([])
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(asked), (pending) =>
      Effect.zipRight(
        Ref.update(waiting, (ids) => [...ids, pending.id]),
        write(neutralizeControls(formatApprovalRequest({
          ...approvalInfo(pending),
          expires: localIso(pending.expiresAtMs, zone).slice(11, 19)
        })))
      ))))
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(answered), (resolution) =>
      Effect.zipRight(
        Ref.update(waiting, (ids) => ids.filter((id) => id !== resolution.id)),
        write(formatApprovalResolved(resolution))
      ))))
    const answer = (id: string, approved: boolean) =>
      approvals.decide(id, approved, localOperator("terminal")).pipe(
        Effect.asVoid,
        Effect.catchAll((error) => Console.log(`kern: ${error.message}`)),
        Effect.zipRight(prompt),
        Effect.as(true)
      )
    // What the agent sends on its own (the message tool) shows here too.
    const sent = yield* PubSub.subscribe((yield* Channels).outgoing)
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(sent), (message) => write(neutralizeControls(formatOutgoing(message))))))
    const server = yield* Effect.forkScoped(runtime.serve)

    const status = Effect.gen(function*() {
      const s = yield* runtime.status
      yield* Console.log([
        `agent:    ${config.name} (${config.provider}/${config.model ?? "no model"})`,
        `session:  ${s.sessionId} (${s.messages} messages)`,
        `queue:    ${s.queued} waiting, ${s.turns} turns since start`,
        `uptime:   ${Math.round(s.uptimeMs / 1000)} s`
      ].join("\n"))
    })

    const handle = (line: string): Effect.Effect<boolean> => Effect.flatMap(Ref.get(waiting), (ids) => {
      const text = line.trim()
      if (text === "") return Effect.as(prompt, true)
      const decision = parseApprovalAnswer(text, ids)
      if (decision !== undefined) {
        return decision._tag === "Answer"
          ? answer(decision.id, decision.approved)
          : Effect.as(Effect.zipRight(Console.log(`kern: ${decision.message}`), prompt), true)
      }
      // Slash commands are the operator's, on a terminal or piped in: they never reach the model.
      if (text.startsWith("/")) {
        switch (text.split(/\s+/)[0]) {
          case "/quit":
          case "/exit":
            return Effect.succeed(false)
          case "/help":
            return Effect.as(Effect.zipRight(Console.log(helpText), prompt), true)
          case "/status":
            return Effect.as(Effect.zipRight(status, prompt), true)
          case "/new":
            return runtime.newSession.pipe(
              Effect.flatMap((id) => Console.log(`new session ${id}`)),
              Effect.catchAll((error) => Console.log(`kern: ${error.message}`)),
              Effect.zipRight(prompt),
              Effect.as(true)
            )
          default:
            return Effect.as(Effect.zipRight(Console.log(`unknown command ${text}; /help lists them`), prompt), true)
        }
      }
      return Effect.as(
        Effect.zipRight(
          holdEcho,
          runtime.submit({ interface: "terminal", channel: "terminal", userId: "operator", text }).pipe(
            Effect.asVoid,
            // Not stored, so not sent: say so and let the operator try again.
            Effect.catchAll((error) => Effect.zipRight(Console.log(`kern: not sent: ${error.message}`), prompt))
          )
        ),
        true
      )
    })

    if (options.interactive) yield* Effect.zipRight(Console.log(`kern — ${config.name}. /help for commands.`), prompt)
    yield* linesOf(input).pipe(Stream.mapEffect(handle), Stream.takeWhile((goOn) => goOn), Stream.runDrain)
    // End of input (or /quit): what was sent is answered before leaving.
    yield* Effect.repeat(runtime.idle, { schedule: Schedule.spaced("50 millis"), until: (idle) => idle })
    yield* Fiber.interrupt(server)
  }))
