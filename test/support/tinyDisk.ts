import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"

/**
 * A real, tiny tmpfs mounted at `mountPoint` for the scope: a write past its size fails with ENOSPC, as on a full
 * disk (needs root, as the test machines and CI run).
 */
export const tinyDisk = (mountPoint: string, size = "64k") =>
  Effect.acquireRelease(
    Effect.sync(() => {
      NodeFs.mkdirSync(mountPoint, { recursive: true })
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", mountPoint])
    }),
    () => Effect.sync(() => execFileSync("umount", ["-l", mountPoint]))
  )

/** Fills the file system holding `path` (a new file) until a write fails with ENOSPC; returns the error's code. */
export const fillDisk = (path: string): string | undefined => {
  const fd = NodeFs.openSync(path, "w")
  const block = Buffer.alloc(4096, 120)
  try {
    for (;;) NodeFs.writeSync(fd, block)
  } catch (error) {
    return error instanceof Error && "code" in error ? String(error.code) : undefined
  } finally {
    NodeFs.closeSync(fd)
  }
}
