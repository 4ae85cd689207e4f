import { Console, type DateTime, Duration, Effect, Option, Ref, Schedule, Stream } from "effect"
import * as NodeReadline from "node:readline"
import { formatApprovalRequest, parseApprovalAnswer } from "../approvalPrompt.js"
import { helpText, showEvent } from "../terminalFormat.js"
import { neutralizeControls } from "../terminalSafe.js"
import type { AgentClient } from "./client.js"

const write = (text: string) => Effect.sync(() => process.stdout.write(neutralizeControls(text)))

/**
 * `kern tui` attached to the running agent over HTTP: lines typed are posted as operator messages, every turn of
 * every channel is shown live, and a dropped connection is resumed from the last event seen. Leaving (Ctrl-C, Ctrl-D,
 * /quit) leaves the agent running.
 */
export const attach = (client: AgentClient, name: string, zone: DateTime.TimeZone) =>
  Effect.scoped(Effect.gen(function*() {
    const tty = process.stdin.isTTY === true && process.stdout.isTTY === true
    const rl = yield* Effect.acquireRelease(
      Effect.sync(() => NodeReadline.createInterface({ input: process.stdin, output: process.stdout, terminal: tty, prompt: "> " })),
      (rl) => Effect.sync(() => rl.close())
    )
    // Ctrl-C leaves this terminal, not the agent.
    rl.on("SIGINT", () => rl.close())
    const prompt = Effect.sync(() => tty ? rl.prompt(true) : undefined)
    const lastSeq = yield* Ref.make(Option.none<number>())
    // The approvals waiting, oldest first: y / n answer the first. Loaded when the stream (re)connects, then kept by
    // the events.
    const waiting = yield* Ref.make<ReadonlyArray<string>>([])
    const loadWaiting = client.approvals.pipe(
      Effect.flatMap(({ approvals }) =>
        Effect.zipRight(
          Ref.set(waiting, approvals.map((a) => a.id)),
          Effect.forEach(approvals, (a) => write(formatApprovalRequest({ ...a, expires: a.expiresAt.slice(11, 19) + " UTC" })), { discard: true })
        )),
      Effect.catchAll((error) => Console.error(`kern: could not list approvals: ${error.message}`))
    )

    const follow = Effect.gen(function*() {
      const resumeFrom = yield* Ref.get(lastSeq)
      const events = yield* client.events(resumeFrom)
      if (Option.isNone(resumeFrom)) yield* loadWaiting
      yield* Stream.runForEach(events, (event) =>
        Effect.gen(function*() {
          if (event.type !== "reset") yield* Ref.set(lastSeq, Option.some(event.seq))
          if (event.type === "approval") yield* Ref.update(waiting, (ids) => ids.includes(event.id) ? ids : [...ids, event.id])
          if (event.type === "approval-resolved") yield* Ref.update(waiting, (ids) => ids.filter((id) => id !== event.id))
          yield* write(showEvent(event, zone))
          if (event.type === "finish") yield* prompt
        }))
    }).pipe(Effect.scoped)
    const reconnecting = follow.pipe(
      Effect.zipRight(Console.error("kern: the connection to the agent ended; reconnecting")),
      Effect.catchAll((error) => Console.error(`kern: ${error.message}; reconnecting`)),
      Effect.repeat(Schedule.spaced(Duration.seconds(1)))
    )
    yield* Effect.forkScoped(reconnecting)

    const handle = (line: string): Effect.Effect<boolean> => Effect.flatMap(Ref.get(waiting), (ids) => {
      const text = line.trim()
      if (text === "") return Effect.as(prompt, true)
      const decision = parseApprovalAnswer(text, ids)
      if (decision !== undefined) {
        return (decision._tag === "Answer"
          ? client.decide(decision.id, decision.approved).pipe(
            Effect.zipRight(Ref.update(waiting, (all) => all.filter((id) => id !== decision.id))),
            Effect.catchAll((error) => Console.log(`kern: ${error.message}`))
          )
          : Console.log(`kern: ${decision.message}`)).pipe(Effect.zipRight(prompt), Effect.as(true))
      }
      if (text.startsWith("/")) {
        switch (text.split(/\s+/)[0]) {
          case "/quit":
          case "/exit":
            return Effect.succeed(false)
          case "/help":
            return Effect.as(Effect.zipRight(Console.log(helpText), prompt), true)
          case "/status":
            return client.status.pipe(
              Effect.flatMap((s) =>
                Console.log([
                  `agent:    ${s.name} (${s.provider}/${s.model ?? "no model"}) at ${client.baseUrl}, pid ${s.runtime.pid}`,
                  `session:  ${s.runtime.sessionId} (${s.runtime.messages} messages)`,
                  `queue:    ${s.runtime.queued} waiting, ${s.runtime.turns} turns since start`,
                  `uptime:   ${Math.round(s.runtime.uptimeMs / 1000)} s`
                ].join("\n"))
              ),
              Effect.catchAll((error) => Console.log(`kern: ${error.message}`)),
              Effect.zipRight(prompt),
              Effect.as(true)
            )
          case "/new":
            return client.newSession.pipe(
              Effect.flatMap(({ sessionId }) => Console.log(`new session ${sessionId}`)),
              Effect.catchAll((error) => Console.log(`kern: ${error.message}`)),
              Effect.zipRight(prompt),
              Effect.as(true)
            )
          default:
            return Effect.as(Effect.zipRight(Console.log(`unknown command ${text}; /help lists them`), prompt), true)
        }
      }
      return client.send({ text, interface: "terminal", channel: "terminal" }).pipe(
        Effect.asVoid,
        Effect.catchAll((error) => Effect.zipRight(Console.log(`kern: not sent: ${error.message}`), prompt)),
        Effect.as(true)
      )
    })

    yield* Console.log(`kern — ${name}, running at ${client.baseUrl}. /help for commands; Ctrl-C leaves it running.`)
    yield* prompt
    const lines = Stream.async<string>((emit) => {
      rl.on("line", (line) => emit.single(line))
      rl.on("close", () => emit.end())
    })
    yield* lines.pipe(Stream.mapEffect(handle), Stream.takeWhile((goOn) => goOn), Stream.runDrain)
  }))
