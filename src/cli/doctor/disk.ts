import { Effect } from "effect"
import * as NodeFs from "node:fs"
import { formatBytes } from "../../tools/textFile.js"
import { type CheckResult, problem, resultOf, warning } from "./Check.js"

/** Free bytes under which the doctor warns: kern.db and the sessions grow with every message. */
export const lowDiskBytes = 1024 ** 3
/** Free bytes under which it is a problem: a full disk refuses messages. */
export const fullDiskBytes = 100 * 1024 ** 2

/** Free space as people say it: GB from a gigabyte on. */
const freeText = (bytes: number) => bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GB` : formatBytes(bytes)

/** The space left for an unprivileged user on the filesystem that holds the folder. */
export const diskCheck = (dir: string): Effect.Effect<CheckResult, { readonly message: string }> =>
  Effect.tryPromise({
    try: () => NodeFs.promises.statfs(dir),
    catch: (error) => ({ message: `statfs ${dir}: ${error instanceof Error ? error.message : String(error)}` })
  }).pipe(Effect.map((stats) => {
    const free = Number(stats.bavail) * Number(stats.bsize)
    const text = `${freeText(free)} free on the folder's filesystem`
    const fix = "free space on that filesystem (old artifacts in .kern/artifacts/, logs in .kern/logs/, other files), " +
      "or move the agent folder to a larger one"
    return resultOf(
      "disk",
      free < fullDiskBytes
        ? [problem(`only ${text}: a full disk refuses messages`, fix)]
        : free < lowDiskBytes
        ? [warning(`${text} (under ${freeText(lowDiskBytes)})`, fix)]
        : [],
      text
    )
  }))
