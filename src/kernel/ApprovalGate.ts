import { Context, Effect, Layer } from "effect"
import type { ApprovalMode } from "../config/schema.js"
import type { ToolSpec } from "./contracts.js"

/** Where the turn that made a call came from: the channel asked to approve it. */
export interface RunOrigin {
  readonly interface: string
  readonly channel: string
  readonly userId: string
}

export interface ApprovalRequest {
  readonly spec: ToolSpec
  readonly args: unknown
  readonly reason: string
  readonly runId: string
  readonly agentName: string
  readonly userSid: string
  readonly traceId?: string | undefined
  readonly sessionId?: string | undefined
  /** The turn's channel; absent for a call made outside a turn (kern kernel exec, a library). */
  readonly origin?: RunOrigin | undefined
}

export interface ApprovalDecision {
  readonly approved: boolean
  /** Who or what decided: "policy:auto", "policy:deny", "operator", a channel user id. */
  readonly by: string
  readonly reason: string
}

/**
 * Who approves a call the policy says needs approval. Channels implement it to ask a person; without anyone to
 * ask, the answer is no.
 */
export class ApprovalGate extends Context.Tag("kern/kernel/ApprovalGate")<ApprovalGate, {
  readonly request: (request: ApprovalRequest) => Effect.Effect<ApprovalDecision>
}>() {}

export const denyAll = (reason = "no one is available to approve it") =>
  Layer.succeed(ApprovalGate, {
    request: () => Effect.succeed({ approved: false, by: "policy:deny", reason })
  })

export const allowAll = (by = "policy:auto") =>
  Layer.succeed(ApprovalGate, {
    request: () => Effect.succeed({ approved: true, by, reason: "approved by policy (approvalMode auto)" })
  })

/**
 * The operator's gate from `approvalMode`: auto approves (and the executor audits it), deny refuses, ask refuses
 * too until a channel that can ask provides its own gate.
 */
export const fromApprovalMode = (mode: ApprovalMode) =>
  mode === "auto"
    ? allowAll()
    : mode === "deny"
    ? denyAll("approvalMode is deny")
    : denyAll("approvalMode is ask and no channel can ask anyone here")
