import { Effect, Option, PubSub, type Scope, Stream } from "effect"
import type { BudgetExceeded } from "../model/BudgetExceeded.js"
import { SpendGuard } from "../model/SpendGuard.js"
import { AgentRuntime, type HeartbeatNotice } from "../runtime/AgentRuntime.js"
import { type ApprovalResolution, Approvals, type PendingApproval } from "../runtime/Approvals.js"
import { Channels, type Outgoing } from "../tools/Channels.js"
import { Questions } from "../tools/Questions.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import { makeTurnOrigins, type TurnOrigin } from "../turn/turnOrigins.js"
import { type AgentEventInput, fileInfo } from "./AgentEvent.js"
import { approvalInfo } from "./approvalInfo.js"
import { questionEvent, questionResolvedEvent } from "./questionInfo.js"

/**
 * A turn's event as it is, and after a `finish` that said something, the reply as sent to the chat the turn came
 * from (`outgoing`, as the message tool's sends are), as the turn's `incoming` named it.
 */
const turnEvents = (event: TurnEvent, origin: Option.Option<TurnOrigin>): ReadonlyArray<AgentEventInput> =>
  event.type === "finish" && event.delivered && Option.isSome(origin)
    ? [event, {
      type: "outgoing",
      turnId: event.turnId,
      conversationId: event.conversationId,
      text: event.reply,
      interface: origin.value.interface,
      channel: origin.value.channel
    }]
    : [event]

const heartbeatEvent = (notice: HeartbeatNotice): AgentEventInput => ({
  type: "heartbeat",
  outcome: notice.outcome,
  reason: notice.reason,
  ...(notice.turnId === undefined ? {} : { turnId: notice.turnId })
})

const limitEvent = (reached: BudgetExceeded): AgentEventInput => ({
  type: "limit",
  cap: reached.cap,
  measure: reached.measure,
  limit: reached.limit,
  spent: reached.spent,
  key: reached.key,
  day: reached.day,
  message: reached.message
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
  channel: sent.channel,
  ...(sent.attachment === undefined ? {} : { file: fileInfo(sent.attachment) })
})

/**
 * Everything the running agent reports, as one stream of its events: every turn (whatever channel it came from:
 * terminal, HTTP, heartbeat, chat channels), the heartbeat's ticks, approvals and questions asked and answered, and what the message
 * tool sent, and each daily spend cap reached (once per cap, whose and day). Subscribed when this runs, in the caller's scope, so nothing after that is missed; the web's event hub
 * and the local terminal follow it.
 */
export const agentFeed: Effect.Effect<
  Stream.Stream<AgentEventInput>,
  never,
  AgentRuntime | Approvals | Questions | Channels | SpendGuard | Scope.Scope
> = Effect.gen(function*() {
  const runtime = yield* AgentRuntime
  const approvals = yield* Approvals
  const channels = yield* Channels
  const turns = yield* PubSub.subscribe(runtime.events)
  const heartbeats = yield* PubSub.subscribe(runtime.heartbeats)
  const asked = yield* PubSub.subscribe(approvals.requests)
  const answered = yield* PubSub.subscribe(approvals.resolved)
  const sent = yield* PubSub.subscribe(channels.outgoing)
  const questions = yield* Questions
  const questionsAsked = yield* PubSub.subscribe(questions.requests)
  const questionsEnded = yield* PubSub.subscribe(questions.resolved)
  const limits = yield* PubSub.subscribe((yield* SpendGuard).reached)
  const origins = yield* makeTurnOrigins
  return Stream.mergeAll([
    Stream.fromQueue(turns).pipe(
      Stream.mapEffect((event) => Effect.map(origins.of(event), (origin) => turnEvents(event, origin))),
      Stream.flattenIterables
    ),
    Stream.fromQueue(heartbeats).pipe(Stream.map(heartbeatEvent)),
    Stream.fromQueue(asked).pipe(Stream.map(approvalEvent)),
    Stream.fromQueue(answered).pipe(Stream.map(resolvedEvent)),
    Stream.fromQueue(sent).pipe(Stream.map(outgoingEvent)),
    Stream.fromQueue(questionsAsked).pipe(Stream.map(questionEvent)),
    Stream.fromQueue(questionsEnded).pipe(Stream.map(questionResolvedEvent)),
    Stream.fromQueue(limits).pipe(Stream.map(limitEvent))
  ], { concurrency: "unbounded" })
})
