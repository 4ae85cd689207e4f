import { Effect } from "effect"
import * as NodeFs from "node:fs"
import { formatBytes } from "../tools/textFile.js"
import { ArchiveRefused, readArchive, type ReadOptions } from "./archiveReader.js"
import { BackupError, describe } from "./BackupError.js"
import type { BackupManifest } from "./manifest.js"

/** Refuses a manifest whose declared content (`bytes` of it to be written) does not fit on the disk of `dir`. */
export const fitsOn = (dir: string, bytes: (manifest: BackupManifest) => number) => (manifest: BackupManifest) => {
  const stats = NodeFs.statfsSync(dir)
  const free = stats.bavail * stats.bsize
  const needed = bytes(manifest)
  if (needed > free) {
    throw new ArchiveRefused(
      `its manifest declares ${formatBytes(needed)} to unpack and ${dir} has ${formatBytes(free)} free: free some space, ` +
        "or if the archive is not one you made, it may be a decompression bomb"
    )
  }
}

/** `readArchive` as an Effect: a refused archive names the file and why; anything else is an I/O error. */
export const readBackup = (file: string, options: ReadOptions): Effect.Effect<BackupManifest, BackupError> =>
  Effect.suspend(() => {
    const stat = NodeFs.statSync(file, { throwIfNoEntry: false })
    if (stat === undefined) return Effect.fail(new BackupError({ reason: "io", message: `${file} does not exist` }))
    if (!stat.isFile()) return Effect.fail(new BackupError({ reason: "io", message: `${file} is not a file` }))
    return Effect.tryPromise({
      try: () => readArchive(file, options),
      catch: (error) =>
        error instanceof ArchiveRefused
          ? new BackupError({ reason: "refused", message: `${file} is refused: ${error.message}` })
          : new BackupError({ reason: "io", message: `could not read ${file}: ${describe(error)}` })
    })
  }).pipe(Effect.withSpan("kern.backup.read"))
