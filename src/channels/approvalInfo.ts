import type { PendingApproval } from "../runtime/Approvals.js"
import { isoAt } from "../session/envelope.js"
import type { PendingApprovalInfo } from "./AgentEvent.js"

/** A waiting approval as clients see it (GET /approvals, the `approval` event, the terminal): flat, times in ISO. */
export const approvalInfo = (pending: PendingApproval): PendingApprovalInfo => ({
  id: pending.id,
  toolId: pending.toolId,
  args: pending.args,
  reason: pending.reason,
  interface: pending.origin.interface,
  channel: pending.origin.channel,
  userId: pending.origin.userId,
  requestedAt: isoAt(pending.requestedAtMs),
  expiresAt: isoAt(pending.expiresAtMs)
})
