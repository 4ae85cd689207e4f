import type { Tracer } from "effect"
import { clip } from "../config/clip.js"
import type { SafetyClass, ToolSpec } from "./contracts.js"
import type { RunContextData } from "./RunContext.js"
import type { ToolErrorCode } from "./ToolFailure.js"

/**
 * What an operator asks of a tool call in a trace, as attributes of its `kern.tool.call` span: which tool, its safety
 * class, whose turn, what the kernel decided (allowed; approved, by whom; denied, by what), how it ended, its retries.
 * Values are plain; whatever leaves the process is redacted at the exporter's one door (src/runtime/otelExport.ts).
 */

/** What refused a call before it ran. */
export type DeniedBy = "unknown_tool" | "contract" | "secret_guard" | "scope" | "delegation" | "policy" | "approval" | "budget"

/** The kernel's decision on a call: run as the policy allows, run after a person (or the policy) approved, or refused. */
export type ToolDecision = "allowed" | "approved" | "denied"

/** A call's arguments on its span are cut to this many characters: enough to recognise a call, no file's contents. */
export const maxArgsChars = 1_000

const maxMessageChars = 500

const argsText = (args: unknown): string => {
  try {
    return clip(JSON.stringify(args) ?? String(args), maxArgsChars)
  } catch {
    return "(arguments that are not JSON)"
  }
}

/** The span's attributes as the call starts: the tool, its class, the run and whose it is, the arguments. */
export const toolCallSpanStart = (ctx: RunContextData, toolId: string, spec: Pick<ToolSpec, "safetyClass"> | undefined, args: unknown) => ({
  attributes: {
    "kern.tool.id": toolId,
    ...(spec === undefined ? {} : { "kern.tool.safety_class": spec.safetyClass }),
    "kern.run.id": ctx.runId,
    "kern.session.id": ctx.sessionId,
    "kern.user.id": ctx.origin?.userId ?? ctx.userSid,
    ...(ctx.origin === undefined ? {} : { "kern.interface": ctx.origin.interface, "kern.channel": ctx.origin.channel }),
    "kern.tool.args": argsText(args)
  },
  captureStackTrace: false
})

export interface ToolCallEnd {
  readonly deniedBy?: DeniedBy | undefined
  readonly success: boolean
  readonly errorCode?: ToolErrorCode | undefined
  readonly errorMessage?: string | undefined
  readonly retries?: number | undefined
  readonly approvedBy?: string | undefined
  readonly safetyClass?: SafetyClass | undefined
}

export const decisionOf = (end: ToolCallEnd): ToolDecision =>
  end.deniedBy !== undefined ? "denied" : end.approvedBy !== undefined ? "approved" : "allowed"

/** The decision and the outcome, set on the span as the call ends (before the span itself ends). */
export const toolCallSpanEnd = (span: Tracer.Span, end: ToolCallEnd, latencyMs: number): void => {
  span.attribute("kern.tool.decision", decisionOf(end))
  if (end.deniedBy !== undefined) span.attribute("kern.tool.denied_by", end.deniedBy)
  if (end.approvedBy !== undefined) span.attribute("kern.tool.approved_by", end.approvedBy)
  span.attribute("kern.tool.status", end.deniedBy !== undefined ? "denied" : end.success ? "ok" : "error")
  if (end.errorCode !== undefined) span.attribute("kern.tool.error_code", end.errorCode)
  if (end.errorMessage !== undefined) span.attribute("kern.tool.error", clip(end.errorMessage, maxMessageChars))
  span.attribute("kern.tool.retries", end.retries ?? 0)
  span.attribute("kern.tool.latency_ms", latencyMs)
}
