import { SpendGuard } from "../model/SpendGuard.js"
import { spendLines } from "../model/spendStatus.js"
import { Context, Effect, Layer, Schedule, type Stream } from "effect"
import { counted } from "../config/counted.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { AgentRuntime } from "../runtime/AgentRuntime.js"
import { Approvals, localOperator } from "../runtime/Approvals.js"
import { agentZone } from "../session/envelope.js"
import { Questions } from "../tools/Questions.js"
import { operatorUserId } from "../turn/MessageQueue.js"
import { TurnStops } from "../turn/TurnStops.js"
import type { AgentEventInput } from "./AgentEvent.js"
import { agentFeed } from "./agentFeed.js"
import { terminalConversation } from "./terminalFormat.js"
import { runTerminalLoop, type TerminalOptions, type TerminalPeer } from "./terminalLoop.js"

export type { TerminalOptions }

/** The agent's events for the local terminal, subscribed when the layer is built. */
export class TerminalFeed extends Context.Tag("kern/channels/TerminalFeed")<TerminalFeed, Stream.Stream<AgentEventInput>>() {}

/**
 * The terminal attached to the running agent: subscribed as a channel of runningAgentLayerWith, before the agent
 * serves a turn, so the terminal sees every event of every turn (those of messages an earlier process left too).
 */
export const feedLayer = Layer.scoped(TerminalFeed, agentFeed)

/**
 * The terminal channel in this process: operator messages from stdin into the queue, every event of the agent on
 * stdout (the loop of terminalLoop.ts, which the attached `kern tui` shares). The running agent (built with
 * feedLayer attached) serves the queue meanwhile; at the end of input what was sent is answered before it returns.
 */
export const runTerminal = (options: TerminalOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const runtime = yield* AgentRuntime
    const approvals = yield* Approvals
    const questions = yield* Questions
    // The terminal's own turns may ask the operator questions while it runs.
    yield* questions.showOn(terminalConversation.interface)
    const { config } = yield* AgentConfig
    const stops = yield* TurnStops
    const events = yield* TerminalFeed
    const guard = yield* SpendGuard
    const peer: TerminalPeer = {
      greeting: `kern — ${config.name}. /help for commands.`,
      zone: agentZone(config.timezone),
      events,
      send: (text) => Effect.asVoid(runtime.submit({ ...terminalConversation, userId: operatorUserId, text })),
      decide: (id, approved) => Effect.asVoid(approvals.decide(id, approved, localOperator("terminal"))),
      answer: (id, reply) => Effect.asVoid(questions.answer(id, reply, localOperator("terminal"))),
      status: Effect.map(runtime.status, (s) =>
        [
          `agent:    ${config.name} (${config.provider}/${config.model ?? "no model"})`,
          `session:  ${s.sessionId} (${counted(s.messages, "message")})`,
          `queue:    ${s.queued} waiting, ${counted(s.turns, "turn")} since start`,
          `uptime:   ${Math.round(s.uptimeMs / 1000)} s`
        ].join("\n")),
      usage: Effect.map(guard.today, (today) => spendLines(today).join("\n")),
      newSession: runtime.newSession(),
      stopTurns: Effect.map(stops.stopOperators(operatorUserId), (turns) => turns.map((turn) => turn.turnId)),
      ctrlC: "stop",
      // What was sent is answered before leaving.
      leaving: Effect.asVoid(Effect.repeat(runtime.idle, { schedule: Schedule.spaced("50 millis"), until: (idle) => idle }))
    }
    yield* runTerminalLoop(peer, options)
  }))
