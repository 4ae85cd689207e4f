// The approvals waiting for a person, as a value: GET /approvals loads them, the event stream adds and resolves them.
// Pure (no DOM, no signals), so the ordering and the races between a load and the events are unit-tested under Node.
import { neutralizeControls } from "../../terminalSafe.js"
import type { PendingApproval, ServerEvent } from "./wire.js"
import { noNames, senderLabel, type UserNames } from "./userNames.js"

export interface ApprovalsState {
  /** Oldest first: the dialog asks about the first. */
  readonly pending: ReadonlyArray<PendingApproval>
  /**
   * Ids answered or timed out while this page watched, with their tool when it was known. A GET /approvals answer
   * may have left the server before the resolution did: such an id must not come back from it.
   */
  readonly resolved: ReadonlyMap<string, string | undefined>
}

export const noApprovals: ApprovalsState = { pending: [], resolved: new Map() }

// Every approval waits the same approvalTimeout, so the one that expires first was asked first.
const oldestFirst = (list: ReadonlyArray<PendingApproval>) =>
  list.slice().sort((a, b) => Date.parse(a.expiresAt) - Date.parse(b.expiresAt))

/** An `approval` event: one more waits (once, however often the stream replays it). */
export const addApproval = (state: ApprovalsState, approval: PendingApproval): ApprovalsState =>
  state.resolved.has(approval.id) || state.pending.some((p) => p.id === approval.id)
    ? state
    : { ...state, pending: oldestFirst([...state.pending, approval]) }

/** An `approval-resolved` event, or this page's own answer taken: it waits no more. */
export const resolveApproval = (state: ApprovalsState, id: string): ApprovalsState =>
  state.resolved.has(id) ? state : {
    pending: state.pending.filter((p) => p.id !== id),
    resolved: new Map(state.resolved).set(id, state.pending.find((p) => p.id === id)?.toolId)
  }

/** The tool of an approval this page knew of, waiting or already answered here. */
export const approvalTool = (state: ApprovalsState, id: string): string | undefined =>
  state.pending.find((p) => p.id === id)?.toolId ?? state.resolved.get(id)

/** GET /approvals' list replaces the pending ones: the server knows what waits (minus what resolved meanwhile). */
export const loadApprovals = (state: ApprovalsState, list: ReadonlyArray<PendingApproval>): ApprovalsState => ({
  ...state,
  pending: oldestFirst(list.filter((p) => !state.resolved.has(p.id)))
})

/** Folds the approval events of a batch into the pending approvals. */
export const applyApprovalEvent = (state: ApprovalsState, event: ServerEvent): ApprovalsState => {
  switch (event.type) {
    case "approval": {
      const { type: _type, seq: _seq, at: _at, ...approval } = event
      return addApproval(state, approval)
    }
    case "approval-resolved":
      return resolveApproval(state, event.id)
    default:
      return state
  }
}

/** What the chat log says when an approval resolved; `toolId` when the page saw it asked. */
export const resolutionText = (
  resolution: { readonly outcome: "approved" | "denied" | "timeout"; readonly by: string },
  toolId: string | undefined
): string => {
  const call = toolId ?? "a tool call"
  switch (resolution.outcome) {
    case "approved":
      return `${call} approved by ${resolution.by}`
    case "denied":
      return `${call} denied by ${resolution.by}`
    case "timeout":
      return `${call}: nobody answered in time, denied`
  }
}

/** "1:05" left until `expiresAt`, or undefined once it passed (the server denies it then). */
export const timeLeft = (expiresAt: string, nowMs: number): string | undefined => {
  const left = Math.ceil((Date.parse(expiresAt) - nowMs) / 1000)
  if (!Number.isFinite(left) || left <= 0) return undefined
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`
}

/** An approval's texts as the dialog shows them. */
export interface ApprovalTexts {
  readonly toolId: string
  readonly reason: string
  readonly origin: string
  readonly args: string
}

const argsText = (args: unknown): string => {
  if (args === null || args === undefined) return "(none)"
  if (typeof args === "string") return args
  try {
    return JSON.stringify(args, null, 2) ?? String(args)
  } catch {
    return String(args)
  }
}

/** Where the call's turn came from; a paired user by name, their id kept beside it (it is what `kern users` shows). */
const originText = (a: PendingApproval, names: UserNames): string => {
  const where = senderLabel(names, { interface: a.interface, channel: a.channel === "" ? undefined : a.channel, userId: a.userId })
  return a.userId === "" ? where : `${where}, user ${a.userId}`
}

/**
 * What the dialog shows of an approval, every text with its control characters shown visibly: a right-to-left
 * override in an argument would otherwise show `evil` as `live` to the person deciding (JSON escapes C0 controls,
 * not the bidi ones).
 */
export const approvalTexts = (a: PendingApproval, names: UserNames = noNames): ApprovalTexts => ({
  toolId: neutralizeControls(a.toolId),
  reason: neutralizeControls(a.reason),
  origin: neutralizeControls(originText(a, names)),
  args: neutralizeControls(argsText(a.args))
})
