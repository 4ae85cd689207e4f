import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Clock, Effect, Option, Ref } from "effect"

interface Entry {
  readonly mtimeMs: number
  readonly size: FileSystem.Size
  readonly text: string
  /** When the file was stat'ed for this text. */
  readonly readAtMs: number
}

/** Reads text files, again only when they changed: one stat instead of open, stat, read and close. */
export interface FileCache {
  readonly readString: (path: string) => Effect.Effect<string, PlatformError>
}

/**
 * A file is read again when its mtime or size differ from when it was read, or when its text was read too soon
 * after its mtime: a second edit of the same size inside the file system's timestamp resolution would otherwise
 * look unchanged (git's "racily clean" rule). Text read at least one resolution step after the mtime is kept, as
 * any later edit lands in a later step. The step is not known: an mtime with a part of a second comes from a file
 * system that keeps finer times (ext4, xfs, btrfs, tmpfs, APFS, NTFS: a kernel tick at most, 100 ms is ample); a
 * whole second may come from one that keeps seconds (ext3, HFS+) or two (FAT). Judged against the time of the
 * read, not of the lookup: text read inside the window stays suspect however old the file grows.
 */
export const racyWindowMs = (mtimeMs: number): number => mtimeMs % 1_000 === 0 ? 2_000 : 100

export const makeFileCache = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const entries = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())
  const readString = (path: string) =>
    Effect.gen(function*() {
      const info = yield* fs.stat(path)
      const mtimeMs = Option.match(info.mtime, { onNone: () => -1, onSome: (date) => date.getTime() })
      const now = yield* Clock.currentTimeMillis
      const cached = (yield* Ref.get(entries)).get(path)
      if (
        cached !== undefined && cached.mtimeMs === mtimeMs && cached.size === info.size &&
        cached.readAtMs - mtimeMs >= racyWindowMs(mtimeMs)
      ) {
        return cached.text
      }
      const text = yield* fs.readFileString(path)
      yield* Ref.update(entries, (map) => new Map(map).set(path, { mtimeMs, size: info.size, text, readAtMs: now }))
      return text
    })
  return { readString } satisfies FileCache
})

/** Without a cache: every read goes to the file. */
export const uncachedFiles = Effect.map(FileSystem.FileSystem, (fs): FileCache => ({ readString: (path) => fs.readFileString(path) }))
