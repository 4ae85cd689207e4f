import { Clock, Effect, Ref } from "effect"
import {
  type AgentFileError,
  inspectAgentFile,
  makeSkippedFiles,
  readAgentText,
  reportEverySkip,
  type SkippedFiles
} from "../storage/agentFiles.js"

interface Entry {
  readonly mtimeMs: number
  readonly size: number
  readonly text: string
  /** When the file was stat'ed for this text. */
  readonly readAtMs: number
}

/**
 * Reads the agent's memory files through the door (src/storage/agentFiles.ts), again only when they changed: one
 * open and fstat instead of a read. `skipped` reports a file the door refused, once per reader that lives long.
 */
export interface FileCache {
  /** `path` (absolute, or relative to `root`), which must be inside the agent folder `root` and not under `.kern/`. */
  readonly readString: (path: string, root: string) => Effect.Effect<string, AgentFileError>
  readonly skipped: SkippedFiles
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
  const entries = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())
  const skipped = yield* makeSkippedFiles()
  const readString = (path: string, root: string) =>
    Effect.gen(function*() {
      const info = yield* inspectAgentFile(path, { roots: [root] })
      const mtimeMs = Math.floor(info.mtimeMs)
      const now = yield* Clock.currentTimeMillis
      const cached = (yield* Ref.get(entries)).get(path)
      if (
        cached !== undefined && cached.mtimeMs === mtimeMs && cached.size === info.size &&
        cached.readAtMs - mtimeMs >= racyWindowMs(mtimeMs)
      ) {
        return cached.text
      }
      const text = yield* readAgentText(path, { roots: [root] })
      yield* Ref.update(entries, (map) => new Map(map).set(path, { mtimeMs, size: info.size, text, readAtMs: now }))
      return text
    })
  return { readString, skipped } satisfies FileCache
})

/** Without a cache: every read goes to the file, every skip is reported (one-shot inspection). */
export const uncachedFiles: Effect.Effect<FileCache> = Effect.succeed({
  readString: (path, root) => readAgentText(path, { roots: [root] }),
  skipped: reportEverySkip()
})
