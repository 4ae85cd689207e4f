import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Random } from "effect"

/**
 * Writes `data` to `target` so that a reader (or a crash) sees the old content or the new, never a mix: the bytes
 * go to a temporary file in the same folder, are flushed, and the file is renamed over the target. The target's
 * permission bits are kept; parent folders are created.
 */
export const atomicWrite = Effect.fn("kern.tools.atomicWrite")(function*(target: string, data: Uint8Array) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const dir = path.dirname(target)
  yield* fs.makeDirectory(dir, { recursive: true })
  const existingMode = yield* fs.stat(target).pipe(
    Effect.map((info) => info.mode & 0o7777),
    Effect.catchAll(() => Effect.succeed(0o644))
  )
  const suffix = (yield* Random.nextInt).toString(36).replace("-", "")
  const temp = path.join(dir, `.${path.basename(target)}.${suffix}.kern-tmp`)
  const writeTemp = Effect.scoped(
    Effect.gen(function*() {
      const file = yield* fs.open(temp, { flag: "wx", mode: existingMode })
      yield* file.writeAll(data)
      yield* file.sync
    })
  )
  yield* writeTemp.pipe(
    Effect.zipRight(fs.rename(temp, target)),
    Effect.onError(() =>
      fs.remove(temp).pipe(Effect.catchAll((error) => Effect.logDebug(`could not remove ${temp}`, error)))
    )
  )
}) satisfies (target: string, data: Uint8Array) => Effect.Effect<void, PlatformError, FileSystem.FileSystem | Path.Path>
