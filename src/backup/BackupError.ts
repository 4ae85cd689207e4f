import { Schema } from "effect"

/**
 * A backup, its check or a restore failed. `reason` says how: the output or target was in the way, the archive was
 * refused (damaged, or hostile: a way out of the folder, a link, a device, a manifest that lies, a bomb), a file
 * changed while it was read, git or SQLite failed, or the disk was short; `message` says what to do.
 */
export class BackupError extends Schema.TaggedError<BackupError>()("BackupError", {
  reason: Schema.Literal("in-the-way", "refused", "changed", "git", "database", "space", "io"),
  message: Schema.String
}) {}

export const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error
    ? String((error as { message: unknown }).message)
    : String(error)
