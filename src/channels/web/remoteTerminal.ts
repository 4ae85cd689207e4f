import { spendLines } from "../../model/spendStatus.js"
import { Console, type DateTime, Duration, Effect, Option, Ref, Stream } from "effect"
import { counted } from "../../config/counted.js"
import type { AgentEventInput } from "../AgentEvent.js"
import { terminalConversation } from "../terminalFormat.js"
import { runTerminalLoop, type TerminalPeer } from "../terminalLoop.js"
import type { AgentClient, ClientError } from "./client.js"

/**
 * The running agent's events for an attached terminal, for as long as it stays: the first connection made before this
 * returns (in the caller's scope: a message sent after it is never missed), a dropped one resumed from the last event
 * seen a second later. A fresh connection starts with the approvals waiting, as their `approval` events.
 */
const followed = (client: AgentClient) =>
  Effect.gen(function*() {
    const lastSeq = yield* Ref.make(Option.none<number>())
    const connect = Effect.gen(function*() {
      const resumeFrom = yield* Ref.get(lastSeq)
      // The terminal shows its own turns' questions: while it is attached, they are offered ask_user_question.
      const events = yield* client.events(resumeFrom, terminalConversation.interface)
      const waiting: ReadonlyArray<AgentEventInput> = Option.isSome(resumeFrom) ? [] : yield* client.approvals.pipe(
        Effect.map(({ approvals }) => approvals.map((pending) => ({ type: "approval" as const, ...pending }))),
        Effect.catchAll((error) => Effect.as(Console.error(`kern: could not list approvals: ${error.message}`), []))
      )
      const live = events.pipe(Stream.tap((event) => event.type === "reset" ? Effect.void : Ref.set(lastSeq, Option.some(event.seq))))
      return Stream.concat(Stream.fromIterable(waiting), live)
    })
    const reconnecting = (connection: Stream.Stream<AgentEventInput, ClientError>): Stream.Stream<AgentEventInput> =>
      connection.pipe(
        Stream.concat(Stream.execute(Console.error("kern: the connection to the agent ended; reconnecting"))),
        Stream.catchAll((error) => Stream.execute(Console.error(`kern: ${error.message}; reconnecting`)))
      )
    const first = yield* connect.pipe(Effect.catchAll((error) => Effect.succeed(Stream.fail(error))))
    const again = Stream.execute(Effect.sleep(Duration.seconds(1))).pipe(
      Stream.concat(reconnecting(Stream.unwrapScoped(connect))),
      Stream.forever
    )
    return Stream.concat(reconnecting(first), again)
  })

/**
 * `kern tui` attached to the running agent over HTTP: the terminal loop of the in-process TUI (terminalLoop.ts), its
 * lines posted as operator messages, every turn of every channel shown live. Leaving (Ctrl-C, Ctrl-D, /quit) leaves
 * the agent running.
 */
export const attach = (client: AgentClient, name: string, zone: DateTime.TimeZone) =>
  Effect.scoped(Effect.gen(function*() {
    const peer: TerminalPeer = {
      greeting: `kern — ${name}, running at ${client.baseUrl}. /help for commands; Ctrl-C leaves it running.`,
      zone,
      events: yield* followed(client),
      send: (text) => Effect.asVoid(client.send({ text, ...terminalConversation })),
      decide: (id, approved) => Effect.asVoid(client.decide(id, approved)),
      answer: (id, reply) => Effect.asVoid(client.answer(id, reply)),
      status: Effect.map(client.status, (s) =>
        [
          `agent:    ${s.name} (${s.provider}/${s.model ?? "no model"}) at ${client.baseUrl}, pid ${s.runtime.pid}`,
          `session:  ${s.runtime.sessionId} (${counted(s.runtime.messages, "message")})`,
          `queue:    ${s.runtime.queued} waiting, ${counted(s.runtime.turns, "turn")} since start`,
          `uptime:   ${Math.round(s.runtime.uptimeMs / 1000)} s`
        ].join("\n")),
      usage: Effect.map(client.status, (s) =>
        s.spend === undefined ? "the running agent does not report its spend (an older kern)" : spendLines(s.spend).join("\n")),
      newSession: Effect.map(client.newSession, ({ sessionId }) => sessionId),
      stopTurns: Effect.map(client.stopTurns, ({ stopped }) => stopped),
      ctrlC: "leave",
      leaving: Effect.void
    }
    yield* runTerminalLoop(peer, { interactive: true })
  }))
