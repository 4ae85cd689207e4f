import { Schema } from "effect"

/** The eight ways a tool call can fail (seed 002, ToolErrorCode taxonomy). */
export const ToolErrorCode = Schema.Literal(
  "NOT_FOUND",
  "PERMISSION_DENIED",
  "TIMEOUT",
  "VALIDATION_ERROR",
  "NETWORK_ERROR",
  "RATE_LIMITED",
  "BUDGET_EXCEEDED",
  "UNEXPECTED"
)
export type ToolErrorCode = typeof ToolErrorCode.Type

/**
 * What a tool handler fails with. The executor turns it into an error ToolResult; `retryable` lets an idempotent
 * tool's transient failure (a network blip) be retried by the executor's schedule.
 */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("ToolFailure", {
  code: ToolErrorCode,
  message: Schema.String,
  retryable: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {}

export const toolFailure = (code: ToolErrorCode, message: string, retryable = false): ToolFailure =>
  new ToolFailure({ code, message, retryable })
