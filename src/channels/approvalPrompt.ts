/** An approval as a terminal shows it: the same for the in-process TUI and the one attached over HTTP. */
export interface ApprovalView {
  readonly id: string
  readonly toolId: string
  readonly args: unknown
  readonly reason: string
  readonly interface: string
  readonly channel: string
  readonly userId: string
  /** When it is denied unanswered, as local time text. */
  readonly expires: string
}

export const argsText = (args: unknown): string => {
  const json = JSON.stringify(args, null, 2)
  return json === undefined ? String(args) : json
}

/** The full arguments, where the turn came from, and how to answer. */
export const formatApprovalRequest = (view: ApprovalView): string =>
  [
    "",
    `── approval ${view.id}: ${view.toolId} needs your yes (${view.reason})`,
    `   asked in a turn from ${view.interface}${view.channel === view.interface ? "" : ` ${view.channel}`}, user ${view.userId}`,
    ...argsText(view.args).split("\n").map((line) => `   ${line}`),
    `   y / n answers it (or /approve ${view.id}, /deny ${view.id}); denied at ${view.expires} without an answer`,
    ""
  ].join("\n")

export const formatApprovalResolved = (resolved: { readonly id: string; readonly outcome: string; readonly by: string }): string =>
  resolved.outcome === "timeout"
    ? `── approval ${resolved.id}: nobody answered in time; denied\n`
    : `── approval ${resolved.id}: ${resolved.outcome} by ${resolved.by}\n`

export type ApprovalAnswer =
  | { readonly _tag: "Answer"; readonly id: string; readonly approved: boolean }
  | { readonly _tag: "Problem"; readonly message: string }

const yes = new Set(["y", "yes"])
const no = new Set(["n", "no"])

/**
 * What a typed line means for approvals: `y`/`n` answer the oldest one waiting (only while one waits: otherwise they
 * are messages), `/approve [id]` and `/deny [id]` a named one or the oldest. Undefined: the line is not an answer.
 */
export const parseApprovalAnswer = (line: string, waiting: ReadonlyArray<string>): ApprovalAnswer | undefined => {
  const text = line.trim()
  const lower = text.toLowerCase()
  const oldest = waiting[0]
  if (oldest !== undefined && (yes.has(lower) || no.has(lower))) return { _tag: "Answer", id: oldest, approved: yes.has(lower) }
  const [command, id] = text.split(/\s+/)
  if (command !== "/approve" && command !== "/deny") return undefined
  const target = id ?? oldest
  if (target === undefined) return { _tag: "Problem", message: "no approval is waiting" }
  return { _tag: "Answer", id: target, approved: command === "/approve" }
}
