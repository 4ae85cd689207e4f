import { Schema } from "effect"

/**
 * An import that cannot start: the source is missing, is not of the kind asked for (or of any kind kern reads), is
 * ambiguous, or is the agent folder itself. What goes wrong with one file of a source is not this error: that file is
 * skipped and the summary says why (ImportPlan's `Skipped`).
 */
export class ImportError extends Schema.TaggedError<ImportError>()("ImportError", {
  reason: Schema.Literal("missing", "wrong-kind", "unknown-kind", "ambiguous", "same-folder", "unreadable", "failed"),
  message: Schema.String
}) {}
