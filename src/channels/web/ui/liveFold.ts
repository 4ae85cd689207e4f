// A batch of live events folded into both the chat and the pending approvals, which meet in the log's approval lines.
import { applyApprovalEvent, approvalTool, type ApprovalsState } from "./approvals.js"
import { addNotice, applyEvent, askedNotice, type ChatState } from "./chatState.js"
import type { ServerEvent } from "./wire.js"

export interface Live {
  readonly chat: ChatState
  readonly approvals: ApprovalsState
}

export const foldLive = (live: Live, events: ReadonlyArray<ServerEvent>): Live =>
  events.reduce((state, event) => {
    // An approval asked before this page loaded (GET /approvals brought it), or answered here before its event came:
    // its resolution still names its tool.
    const toolId = event.type === "approval-resolved" ? approvalTool(state.approvals, event.id) : undefined
    const chat = event.type !== "approval-resolved" || toolId === undefined
      ? state.chat
      : addNotice(state.chat, askedNotice({ id: event.id, toolId, at: event.at }))
    return { chat: applyEvent(chat, event), approvals: applyApprovalEvent(state.approvals, event) }
  }, live)
