import type { ApprovalResolution, PendingApproval } from "../../runtime/Approvals.js"
import { escapeSlack } from "./mrkdwn.js"

export const approveAction = "kern_approve"
export const denyAction = "kern_deny"

/** A section block's text holds 3,000 characters: the arguments get what the heading leaves. */
const argsRoom = 2_600

const argumentsText = (args: unknown): string => {
  const json = JSON.stringify(args, null, 2) ?? String(args)
  return json.length > argsRoom ? `${json.slice(0, argsRoom)}\n… (${json.length - argsRoom} more characters)` : json
}

const summary = (pending: PendingApproval): string =>
  `*Approval needed:* \`${escapeSlack(pending.toolId)}\`\n${escapeSlack(pending.reason)}\n` +
  "```" + escapeSlack(argumentsText(pending.args)) + "```"

/** The request as posted: the tool, the reason and the arguments, with Approve and Deny buttons carrying the id. */
export const requestMessage = (pending: PendingApproval) => ({
  text: `Approval needed: ${pending.toolId} (${pending.id})`,
  blocks: [
    { type: "section", text: { type: "mrkdwn", text: summary(pending) } },
    {
      type: "actions",
      block_id: `kern_approval_${pending.id}`,
      elements: [
        { type: "button", action_id: approveAction, style: "primary", value: pending.id, text: { type: "plain_text", text: "Approve" } },
        { type: "button", action_id: denyAction, style: "danger", value: pending.id, text: { type: "plain_text", text: "Deny" } }
      ]
    }
  ]
})

const outcomeLine = (resolution: ApprovalResolution): string =>
  resolution.outcome === "timeout"
    ? ":hourglass: Nobody answered in time: denied."
    : resolution.outcome === "approved"
    ? `:white_check_mark: Approved by ${escapeSlack(resolution.by)}.`
    : `:no_entry: Denied by ${escapeSlack(resolution.by)}.`

/** The request once answered: what was asked and who decided (or that it timed out), without buttons. */
export const resolvedMessage = (pending: PendingApproval, resolution: ApprovalResolution) => ({
  text: `${pending.toolId}: ${resolution.outcome} (${pending.id})`,
  blocks: [
    { type: "section", text: { type: "mrkdwn", text: summary(pending) } },
    { type: "context", elements: [{ type: "mrkdwn", text: outcomeLine(resolution) }] }
  ]
})
