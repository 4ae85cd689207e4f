import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { BackupError, describe } from "./BackupError.js"

/**
 * A private folder of its own in `parent` (0700), removed with everything in it when the scope closes, whether the
 * work succeeded, failed or was interrupted: what a backup or a restore leaves behind is its result or nothing.
 */
export const stagingDir = (parent: string, prefix: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => NodeFs.mkdtempSync(NodePath.join(parent, prefix)),
      catch: (error) => new BackupError({ reason: "io", message: `could not make a working folder in ${parent}: ${describe(error)}` })
    }),
    (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
  )
