import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Clock, Effect, Option, Ref } from "effect"

interface Entry {
  readonly mtimeMs: number
  readonly size: FileSystem.Size
  readonly text: string
}

/** Reads text files, again only when they changed: one stat instead of open, stat, read and close. */
export interface FileCache {
  readonly readString: (path: string) => Effect.Effect<string, PlatformError>
}

/**
 * A file is read again when its mtime or size differ from when it was read, or when it was modified within the
 * last two seconds: a second edit of the same size inside the file system's timestamp resolution would otherwise
 * look unchanged (git's "racily clean" rule).
 */
const racyWindowMs = 2_000

export const makeFileCache = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const entries = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())
  const readString = (path: string) =>
    Effect.gen(function*() {
      const info = yield* fs.stat(path)
      const mtimeMs = Option.match(info.mtime, { onNone: () => -1, onSome: (date) => date.getTime() })
      const now = yield* Clock.currentTimeMillis
      const cached = (yield* Ref.get(entries)).get(path)
      if (cached !== undefined && cached.mtimeMs === mtimeMs && cached.size === info.size && now - mtimeMs >= racyWindowMs) {
        return cached.text
      }
      const text = yield* fs.readFileString(path)
      yield* Ref.update(entries, (map) => new Map(map).set(path, { mtimeMs, size: info.size, text }))
      return text
    })
  return { readString } satisfies FileCache
})

/** Without a cache: every read goes to the file. */
export const uncachedFiles = Effect.map(FileSystem.FileSystem, (fs): FileCache => ({ readString: (path) => fs.readFileString(path) }))
