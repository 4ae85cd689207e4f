import { Effect, Layer, PubSub, Stream } from "effect"
import { AgentRuntime, type HeartbeatNotice, type RuntimeEvent } from "../../runtime/AgentRuntime.js"
import { type ApprovalResolution, Approvals, type PendingApproval } from "../../runtime/Approvals.js"
import { approvalInfo } from "../approvalInfo.js"
import { Channels, type Outgoing } from "../../tools/Channels.js"
import { noUsage, turnIdsOf, type TurnUsage } from "../../turn/TurnEvent.js"
import type { AgentEventInput } from "./api.js"
import { EventHub } from "./EventHub.js"

interface TurnState {
  usage: TurnUsage
}

/**
 * Turns the runtime's turn events into the API's events (the turn took out a NO_REPLY marker at the source); the usage
 * is carried into `finish`.
 */
export const makeTranslator = () => {
  const turns = new Map<string, TurnState>()
  const turnOf = (turnId: string): TurnState => {
    const existing = turns.get(turnId)
    if (existing !== undefined) return existing
    const created = { usage: noUsage }
    turns.set(turnId, created)
    return created
  }
  return ({ event, message }: RuntimeEvent): ReadonlyArray<AgentEventInput> => {
    const turnId = message.turnId
    const ids = turnIdsOf(message)
    switch (event.type) {
      case "step": {
        const thinking: AgentEventInput = { type: "thinking", ...ids, step: event.step }
        if (event.step !== 1) return [thinking]
        turnOf(turnId)
        return [{
          type: "incoming",
          ...ids,
          messageId: turnId,
          text: message.text,
          interface: message.interface,
          channel: message.channel,
          userId: message.userId
        }, thinking]
      }
      case "text":
        return [{ type: "text-delta", ...ids, delta: event.delta }]
      case "tool-call":
        return [{ type: "tool-call", ...ids, id: event.id, name: event.name, params: event.params }]
      case "tool-result":
        return [{
          type: "tool-result",
          ...ids,
          id: event.id,
          name: event.name,
          isError: event.isError,
          text: event.text,
          durationMs: event.durationMs
        }]
      case "injected":
        return [{
          type: "incoming",
          ...ids,
          messageId: event.message.turnId,
          text: event.message.text,
          interface: event.message.interface,
          channel: event.message.channel,
          userId: event.message.userId
        }]
      case "usage": {
        const { type: _, ...usage } = event
        turnOf(turnId).usage = usage
        return []
      }
      case "context":
        // A progress line of the context's own work (an overflow being summarized): the terminal shows it; the
        // stream's `thinking` already says the turn is at work.
        return []
      case "recall":
        return [{ type: "recall", ...ids, query: event.query, hits: event.hits.length, tokens: event.tokens }]
      case "error":
        return [{ type: "error", ...ids, message: event.message, failure: event.failure }]
      case "done": {
        const state = turnOf(turnId)
        turns.delete(turnId)
        return [
          { type: "finish", ...ids, reply: event.reply, steps: event.steps, usage: state.usage, delivered: event.delivered },
          ...(event.delivered
            ? [{ type: "outgoing", ...ids, text: event.reply, interface: message.interface, channel: message.channel } as const]
            : [])
        ]
      }
    }
  }
}

const heartbeatEvent = (notice: HeartbeatNotice): AgentEventInput => ({
  type: "heartbeat",
  outcome: notice.outcome,
  reason: notice.reason,
  ...(notice.turnId === undefined ? {} : { turnId: notice.turnId })
})

const approvalEvent = (pending: PendingApproval): AgentEventInput => ({ type: "approval", ...approvalInfo(pending) })

const resolvedEvent = (resolution: ApprovalResolution): AgentEventInput => ({
  type: "approval-resolved",
  id: resolution.id,
  approved: resolution.approved,
  outcome: resolution.outcome,
  by: resolution.by
})

const outgoingEvent = (sent: Outgoing): AgentEventInput => ({
  type: "outgoing",
  text: sent.text,
  interface: sent.interface,
  channel: sent.channel
})

/**
 * Feeds the hub from the running agent: every turn, whatever channel it came from (terminal, HTTP, heartbeat, chat
 * channels), the heartbeat's ticks, approvals asked and answered, and what the message tool sent. Subscribed when the
 * layer is built, before the runtime serves a turn.
 */
export const layer: Layer.Layer<never, never, EventHub | AgentRuntime | Approvals | Channels> = Layer.scopedDiscard(Effect.gen(function*() {
  const hub = yield* EventHub
  const runtime = yield* AgentRuntime
  const approvals = yield* Approvals
  const channels = yield* Channels
  const turns = yield* PubSub.subscribe(runtime.events)
  const heartbeats = yield* PubSub.subscribe(runtime.heartbeats)
  const asked = yield* PubSub.subscribe(approvals.requests)
  const answered = yield* PubSub.subscribe(approvals.resolved)
  const sent = yield* PubSub.subscribe(channels.outgoing)
  const translate = makeTranslator()
  const all = Stream.mergeAll([
    Stream.fromQueue(turns).pipe(Stream.mapConcat(translate)),
    Stream.fromQueue(heartbeats).pipe(Stream.map(heartbeatEvent)),
    Stream.fromQueue(asked).pipe(Stream.map(approvalEvent)),
    Stream.fromQueue(answered).pipe(Stream.map(resolvedEvent)),
    Stream.fromQueue(sent).pipe(Stream.map(outgoingEvent))
  ], { concurrency: "unbounded" })
  yield* Effect.forkScoped(Stream.runForEach(all, hub.publish))
}))
