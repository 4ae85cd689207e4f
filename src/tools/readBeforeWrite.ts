import { Effect } from "effect"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { ReadTracker, sameSnapshot, snapshotOf } from "./ReadTracker.js"
import type { ResolvedPath } from "./Workspace.js"

/**
 * Refuses to change an existing file unless this session read it and it still holds what was read (size and
 * SHA-256 of the content), so the model never overwrites work it has not seen.
 */
export const ensureReadAndUnchanged = (
  sessionId: string,
  file: ResolvedPath,
  current: Uint8Array
): Effect.Effect<void, ToolFailure, ReadTracker> =>
  Effect.gen(function*() {
    const tracker = yield* ReadTracker
    const seen = yield* tracker.lookup(sessionId, file.path)
    if (seen === undefined) {
      return yield* toolFailure(
        "VALIDATION_ERROR",
        `${file.display} already exists and has not been read in this session; read it first, then write or edit it`
      )
    }
    const now = snapshotOf(current)
    if (!sameSnapshot(now, seen)) {
      return yield* toolFailure(
        "VALIDATION_ERROR",
        `${file.display} changed on disk since you read it (${seen.size} → ${now.size} bytes); read it again before changing it`
      )
    }
  })
