import { FileSystem, Path } from "@effect/platform"
import { orIfMissing } from "./missingFile.js"
import type { PlatformError } from "@effect/platform/Error"
import { Data, Effect, Option, Random } from "effect"
import { type FileSnapshot, sameSnapshot, snapshotOf } from "./fileSnapshot.js"

/** The target no longer held what the writer based its new content on when the rename was due. */
export class TargetChanged extends Data.TaggedError("TargetChanged")<{ readonly path: string }> {}

/** What the target must hold right before the rename: a snapshot of its content, or nothing at all. */
export type Expected = FileSnapshot | "absent"

const currentSnapshot = (fs: FileSystem.FileSystem, target: string) =>
  fs.readFile(target).pipe(
    Effect.map((bytes) => Option.some(snapshotOf(bytes))),
    Effect.catchIf(
      (error) => error._tag === "SystemError" && error.reason === "NotFound",
      () => Effect.succeed(Option.none<FileSnapshot>())
    )
  )

const matches = (now: Option.Option<FileSnapshot>, expected: Expected) =>
  expected === "absent" ? Option.isNone(now) : Option.isSome(now) && sameSnapshot(now.value, expected)

/** The modes of what a write creates (folders and a new target); an existing target keeps its own. */
export interface CreatedModes {
  readonly dir: number
  readonly file: number
}
const publicModes: CreatedModes = { dir: 0o777, file: 0o644 }

/**
 * Writes `data` to `target` so that a reader (or a crash) sees the old content or the new, never a mix: the bytes
 * go to a temporary file in the same folder, are flushed, and the file is renamed over the target. The target's
 * permission bits are kept; parent folders are created. With `expected`, the target is checked once more right
 * before the rename, so a change made while the new content was computed and flushed is refused, not overwritten.
 */
export const atomicWrite = Effect.fn("kern.tools.atomicWrite")(function*(
  target: string,
  data: Uint8Array,
  expected?: Expected,
  created: CreatedModes = publicModes
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const dir = path.dirname(target)
  yield* fs.makeDirectory(dir, { recursive: true, mode: created.dir })
  const existingMode = yield* fs.stat(target).pipe(
    Effect.map((info) => info.mode & 0o7777),
    orIfMissing(() => created.file)
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
  const recheck = expected === undefined ? Effect.void : Effect.flatMap(
    currentSnapshot(fs, target),
    (now) => matches(now, expected) ? Effect.void : Effect.fail(new TargetChanged({ path: target }))
  )
  yield* writeTemp.pipe(
    Effect.zipRight(recheck),
    Effect.zipRight(fs.rename(temp, target)),
    Effect.onError(() =>
      fs.remove(temp).pipe(Effect.catchAll((error) => Effect.logDebug(`could not remove ${temp}`, error)))
    )
  )
}) satisfies (
  target: string,
  data: Uint8Array,
  expected?: Expected,
  created?: CreatedModes
) => Effect.Effect<void, PlatformError | TargetChanged, FileSystem.FileSystem | Path.Path>
