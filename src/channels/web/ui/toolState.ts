// What a tool row says of its call: pure, so the rule is unit-tested under Node.
import type { ToolResult } from "./chatState.js"

export type ToolState = "running" | "ok" | "failed" | "denied"

/**
 * The kernel reports a refused call as `PERMISSION_DENIED: <why>` (the policy, a person or nobody in time said no,
 * or the user's scope does not reach it; the workspace or the system refused it): the call was denied, it did not
 * fail.
 */
export const deniedPrefix = "PERMISSION_DENIED: "

export const toolState = (result: ToolResult | undefined): ToolState =>
  result === undefined ? "running" : !result.isError ? "ok" : result.text.startsWith(deniedPrefix) ? "denied" : "failed"

/** Why a denied call was denied (the text after the code), for the row's summary line. */
export const deniedReason = (result: ToolResult | undefined): string | undefined =>
  toolState(result) === "denied" ? result?.text.slice(deniedPrefix.length).split("\n")[0] : undefined
