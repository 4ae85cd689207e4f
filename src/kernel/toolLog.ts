import { Effect, LogLevel } from "effect"
import type { KnownSecret } from "../config/KnownSecrets.js"
import { redactSecrets } from "./secretGuard.js"
import type { ToolErrorCode } from "./ToolFailure.js"

/** How a tool call ended, as the log says it. */
export type ToolOutcome = "ok" | "refused" | "failed" | "timed out"

export const toolOutcome = (end: { readonly refused: boolean; readonly success: boolean; readonly errorCode?: ToolErrorCode | undefined }): ToolOutcome =>
  end.refused ? "refused" : end.success ? "ok" : end.errorCode === "TIMEOUT" ? "timed out" : "failed"

/** A call that went through is chatty (debug); a refusal or failure is worth reading (info), a timeout a warning. */
const levels: Record<ToolOutcome, LogLevel.LogLevel> = {
  ok: LogLevel.Debug,
  refused: LogLevel.Info,
  failed: LogLevel.Info,
  "timed out": LogLevel.Warning
}

export interface ToolCallLog {
  readonly toolId: string
  readonly outcome: ToolOutcome
  readonly durationMs: number
  /** The call's arguments: logged with every known secret redacted (and cut short by the log file's logger). */
  readonly args: unknown
  readonly errorCode?: ToolErrorCode | undefined
  readonly errorMessage?: string | undefined
  readonly retries: number
  readonly approvedBy?: string | undefined
}

/**
 * One line per tool call, whatever its end, annotated with the tool, its outcome, duration and arguments (and the
 * turn's own annotations). The arguments are redacted here, for whichever logger shows them (the foreground's
 * terminal too), and only when the line is logged at all: most calls are debug lines nobody keeps. The caller passes
 * its fiber's minimum level (`fiber.getFiberRef(FiberRef.currentMinimumLogLevel)`); undefined when the line is below it.
 */
export const logToolCall = (
  minimum: LogLevel.LogLevel,
  call: ToolCallLog,
  secrets: ReadonlyArray<KnownSecret>
): Effect.Effect<void> | undefined => {
  const level = levels[call.outcome]
  return LogLevel.lessThan(level, minimum)
    ? undefined
    : Effect.logWithLevel(
      level,
      `tool ${call.toolId} ${call.outcome} in ${call.durationMs} ms${call.errorMessage === undefined ? "" : `: ${call.errorMessage}`}`
    ).pipe(
      Effect.annotateLogs({
        tool: call.toolId,
        outcome: call.outcome,
        durationMs: call.durationMs,
        ...(call.errorCode === undefined ? {} : { errorCode: call.errorCode }),
        ...(call.retries === 0 ? {} : { retries: call.retries }),
        ...(call.approvedBy === undefined ? {} : { approvedBy: call.approvedBy }),
        args: redactSecrets(call.args, secrets)
      })
    )
}
