import { Schema } from "effect"

/** The command line was wrong in a way the parser could not see (two folders given, a bad flag value). */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {}

/** A command that ran and failed for a reason the user can act on; exit code 1. */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  message: Schema.String
}) {}

const usageTags: ReadonlySet<string> = new Set([
  "UsageError",
  "ConfigError",
  "ValidationError",
  "ModelConfigMissing",
  "NotAnAgentFolder",
  "DatabaseConfigError",
  "HostConfigError"
])

/** Exit codes (DESIGN.md): 0 ok, 1 failure, 2 usage or configuration error. */
export const exitCodeFor = (error: { readonly _tag?: string; readonly reason?: unknown }): 1 | 2 => {
  if (error._tag === "InitError") return error.reason === "io" ? 1 : 2
  return error._tag !== undefined && usageTags.has(error._tag) ? 2 : 1
}

/**
 * What a failed command prints on stderr (`kern: <message>`), its exit code, and whether the command's usage line
 * follows (a mistake in the command line, not in the folder or its configuration).
 */
export const failureReport = (error: unknown): { readonly line: string; readonly code: 1 | 2; readonly usage: boolean } => {
  const tagged = typeof error === "object" && error !== null ? (error as { _tag?: string; reason?: unknown }) : {}
  const message = error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)
  return { line: `kern: ${message}`, code: exitCodeFor(tagged), usage: tagged._tag === "UsageError" }
}
