import { Clock, Context, Duration, Effect, Layer, Option, PubSub, Schema } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import type { ApprovalDecision, ApprovalRequest } from "../kernel/ApprovalGate.js"
import { ApprovalGate } from "../kernel/ApprovalGate.js"
import { EventLog, recordOrWarn } from "../kernel/EventLog.js"
import { argsDigest } from "../kernel/fingerprint.js"
import { type Answerer, channelUser, localOperator, makePendingAnswers } from "../kernel/pendingAnswers.js"
import { randomHex } from "../kernel/RunContext.js"
import { PairingStore } from "../users/PairingStore.js"
import { heartbeatInterface } from "../turn/MessageQueue.js"

export class ApprovalOrigin extends Schema.Class<ApprovalOrigin>("ApprovalOrigin")({
  interface: Schema.String,
  channel: Schema.String,
  userId: Schema.String
}) {}

/** A DESTRUCTIVE or privileged call (ToolPolicy.decide) waiting for a person's yes or no. */
export class PendingApproval extends Schema.Class<PendingApproval>("PendingApproval")({
  /** `apr_<8 hex>`: what `kern approve <id>` takes and buttons carry. */
  id: Schema.String,
  toolId: Schema.String,
  /** The call's arguments in full: the person decides on what will run. */
  args: Schema.Unknown,
  reason: Schema.String,
  /** The channel the turn came from; `terminal` with user `operator` for calls made outside a turn. */
  origin: ApprovalOrigin,
  runId: Schema.String,
  requestedAtMs: Schema.Number,
  expiresAtMs: Schema.Number
}) {}

export class ApprovalResolution extends Schema.Class<ApprovalResolution>("ApprovalResolution")({
  id: Schema.String,
  approved: Schema.Boolean,
  outcome: Schema.Literal("approved", "denied", "timeout"),
  /** Who decided: `operator` (terminal, web, CLI), `telegram:42`, or `timeout`. */
  by: Schema.String,
  atMs: Schema.Number
}) {}

export class ApprovalError extends Schema.TaggedError<ApprovalError>()("ApprovalError", {
  reason: Schema.Literal("unknown_id", "not_operator"),
  message: Schema.String
}) {}

/** Who answers an approval: the local operator, or a chat user, who must be a paired operator. */
export type Approver = Answerer
export { channelUser, localOperator }

export interface ApprovalsShape {
  /** Asks, and waits for an answer or `approvalTimeout` (then no). Heartbeat turns have nobody to ask: no. */
  readonly ask: (request: ApprovalRequest) => Effect.Effect<ApprovalDecision>
  readonly decide: (id: string, approved: boolean, by: Approver) => Effect.Effect<ApprovalResolution, ApprovalError>
  readonly pending: Effect.Effect<ReadonlyArray<PendingApproval>>
  /** Every new request, for the channels that show them (subscribe before a turn can ask). */
  readonly requests: PubSub.PubSub<PendingApproval>
  /** Every answer (or timeout), so a channel can update what it showed. */
  readonly resolved: PubSub.PubSub<ApprovalResolution>
}

/**
 * The approvals in flight: `approvalMode: ask` routes DESTRUCTIVE and privileged calls here; the channel the turn
 * came from shows the full arguments (the terminal and web UI show every pending one) and whoever answers first, if
 * allowed, decides.
 * The decision, who made it and when are recorded in the EventLog.
 */
export class Approvals extends Context.Tag("kern/runtime/Approvals")<Approvals, ApprovalsShape>() {}

interface Waiting {
  readonly pending: PendingApproval
  readonly request: ApprovalRequest
}

/** Who "decided" a call whose turn ended while it waited: "denied by the end of its turn". */
const turnEnded = "the end of its turn"

export const make = Effect.gen(function*() {
  const { config } = yield* AgentConfig
  const pairings = yield* PairingStore
  const eventLog = yield* EventLog
  const requests = yield* PubSub.unbounded<PendingApproval>()
  const resolved = yield* PubSub.unbounded<ApprovalResolution>()
  const timeout = Duration.seconds(config.approvalTimeout)

  const audit = (entry: Waiting, resolution: ApprovalResolution) =>
    recordOrWarn(eventLog, {
      decisionKey: "kernel.tool.approval",
      runId: entry.request.runId,
      traceId: entry.request.traceId ?? "",
      sessionId: entry.request.sessionId ?? "",
      toolId: entry.pending.toolId,
      argsDigest: argsDigest(entry.request.args),
      status: resolution.outcome,
      detail: JSON.stringify({
        approvalId: resolution.id,
        by: resolution.by,
        atMs: resolution.atMs,
        requestedAtMs: entry.pending.requestedAtMs,
        origin: entry.pending.origin
      })
    })

  const waits = yield* makePendingAnswers<Waiting, ApprovalResolution>((entry, resolution) =>
    Effect.zipRight(audit(entry, resolution), PubSub.publish(resolved, resolution))
  )

  const ask = (request: ApprovalRequest): Effect.Effect<ApprovalDecision> =>
    Effect.gen(function*() {
      const origin = request.origin ?? { interface: "terminal", channel: "terminal", userId: "operator" }
      if (origin.interface === heartbeatInterface) {
        yield* Effect.logInfo(`approval of ${request.spec.toolId} refused: a heartbeat turn has nobody to ask`).pipe(
          Effect.annotateLogs({ tool: request.spec.toolId, outcome: "denied", by: "policy:deny" })
        )
        return { approved: false, by: "policy:deny", reason: "a heartbeat turn has nobody to ask" }
      }
      const id = `apr_${yield* randomHex(8)}`
      const now = yield* Clock.currentTimeMillis
      const pending = new PendingApproval({
        id,
        toolId: request.spec.toolId,
        args: request.args,
        reason: request.reason,
        origin: new ApprovalOrigin(origin),
        runId: request.runId,
        requestedAtMs: now,
        expiresAtMs: now + Duration.toMillis(timeout)
      })
      const answer = yield* waits.open(id, { pending, request })
      yield* PubSub.publish(requests, pending)
      yield* Effect.logInfo(`approval ${id} asked: ${request.spec.toolId} (${request.reason}), from ${origin.interface}:${origin.userId}`).pipe(
        Effect.annotateLogs({ approval: id })
      )
      // A turn that ends while it waits (stopped, or kern shutting down) leaves nothing pending, and says so: every
      // dialog and chat prompt showing the call moves on.
      const resolution = yield* waits.wait(id, answer, timeout, (how, _, atMs) =>
        how === "timeout"
          ? new ApprovalResolution({ id, approved: false, outcome: "timeout", by: "timeout", atMs })
          : new ApprovalResolution({ id, approved: false, outcome: "denied", by: turnEnded, atMs }))
      yield* Effect.logInfo(`approval ${id} ${resolution.outcome === "timeout" ? "timed out (denied)" : `${resolution.outcome} by ${resolution.by}`}`).pipe(
        Effect.annotateLogs({ approval: id, outcome: resolution.outcome, by: resolution.by, waitedMs: resolution.atMs - now })
      )
      return {
        approved: resolution.approved,
        by: resolution.by,
        reason: resolution.outcome === "timeout"
          ? `nobody answered within ${config.approvalTimeout} s`
          : resolution.approved
          ? `approved by ${resolution.by}`
          : `denied by ${resolution.by}`
      }
    }).pipe(Effect.annotateLogs({ tool: request.spec.toolId }), Effect.withSpan("kern.approvals.ask"))

  const approverName = (by: Approver): Effect.Effect<string, ApprovalError> =>
    by._tag === "LocalOperator"
      ? Effect.succeed("operator")
      : Effect.gen(function*() {
        const scope = yield* pairings.find(`${by.interface}:${by.userId}`).pipe(Effect.option)
        if (Option.isNone(scope) || scope.value.status !== "approved" || scope.value.role !== "operator") {
          return yield* new ApprovalError({
            reason: "not_operator",
            message: `${by.interface}:${by.userId} is not an operator: only an operator can approve (kern users promote)`
          })
        }
        return `${by.interface}:${by.userId}`
      })

  const decide = (id: string, approved: boolean, by: Approver) =>
    Effect.gen(function*() {
      if (Option.isNone(yield* waits.find(id))) {
        return yield* new ApprovalError({ reason: "unknown_id", message: `no approval ${id} is waiting (answered, timed out, or never asked)` })
      }
      const name = yield* approverName(by)
      const settled = yield* waits.settle(id, (_, atMs) =>
        new ApprovalResolution({ id, approved, outcome: approved ? "approved" : "denied", by: name, atMs }))
      if (Option.isNone(settled)) {
        return yield* new ApprovalError({ reason: "unknown_id", message: `approval ${id} was answered or timed out meanwhile` })
      }
      return settled.value
    }).pipe(Effect.withSpan("kern.approvals.decide"))

  const pending = Effect.map(waits.pending, (all) => all.map((entry) => entry.pending))

  return Approvals.of({ ask, decide, pending, requests, resolved })
})

/** The agent's approvals (needs its config, users and audit log). */
export const layer: Layer.Layer<Approvals, never, AgentConfig | PairingStore | EventLog> = Layer.effect(Approvals, make)

/** The gate `approvalMode: ask` uses: every call needing approval goes to a person through Approvals. */
export const askGate: Layer.Layer<ApprovalGate, never, Approvals> = Layer.effect(
  ApprovalGate,
  Effect.map(Approvals, (approvals) => ApprovalGate.of({ request: approvals.ask }))
)
